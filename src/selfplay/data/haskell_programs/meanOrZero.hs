meanOrZero :: [Int] -> Double
meanOrZero [] = 0
meanOrZero xs = fromIntegral (sum xs) / fromIntegral (length xs)
