primeFactors :: Int -> [Int]
primeFactors n
  | n < 2 = []
  | otherwise = peel n 2
  where
    peel m d
      | m < 2 = []
      | d > m `div` d = [m]
      | m `mod` d == 0 = d : peel (m `div` d) d
      | otherwise = peel m (d + 1)
