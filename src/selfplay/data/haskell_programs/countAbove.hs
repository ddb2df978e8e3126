-- reflectable
countAbove :: Int -> [Int] -> Int
countAbove _ [] = 0
countAbove t (x:xs)
  | x > t = 1 + countAbove t xs
  | otherwise = countAbove t xs
