binomial :: Integer -> Integer -> Integer
binomial n k
  | n < 0 || k < 0 || k > n = 0
  | otherwise = product [n - small + 1 .. n] `div` product [1 .. small]
  where
    small = min k (n - k)
