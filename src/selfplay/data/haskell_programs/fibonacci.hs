fibonacci :: Int -> Integer
fibonacci n = walk (max 0 n) 0 1
  where
    walk :: Int -> Integer -> Integer -> Integer
    walk 0 a _ = a
    walk k a b = walk (k - 1) b (a + b)
