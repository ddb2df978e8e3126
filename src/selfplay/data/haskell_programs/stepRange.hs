stepRange :: Int -> Int -> Int -> [Int]
stepRange start stop step
  | step <= 0 || start >= stop = []
  | stop - start <= step = [start]
  | otherwise = start : stepRange (start + step) stop step
