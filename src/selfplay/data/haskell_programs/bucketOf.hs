bucketOf :: Double -> Int
bucketOf x
  | isNaN x || x <= 0 = 0
  | x >= 1 = 9
  | otherwise = min 9 (floor (x * 10))
