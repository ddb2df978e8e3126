groupsOf :: Int -> [Int] -> [[Int]]
groupsOf n xs
  | n <= 0 || null xs = []
  | otherwise = front : groupsOf n rest
  where
    (front, rest) = splitAt n xs
