-- reflectable
replaceAt :: Int -> Int -> [Int] -> [Int]
replaceAt _ _ [] = []
replaceAt i v (x:xs)
  | i == 0 = v : xs
  | otherwise = x : replaceAt (i - 1) v xs
