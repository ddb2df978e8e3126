-- reflectable
triangular :: Int -> Int
triangular n
  | n <= 0 = 0
  | otherwise = n + triangular (n - 1)
