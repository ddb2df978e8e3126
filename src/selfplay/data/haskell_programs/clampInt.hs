-- reflectable
clampInt :: Int -> Int -> Int -> Int
clampInt lo hi x
  | hi < lo = lo
  | x < lo = lo
  | x > hi = hi
  | otherwise = x
