sumAndProduct :: [Int] -> (Int, Int)
sumAndProduct = foldr step (0, 1)
  where
    step x (s, p) = (x + s, x * p)
