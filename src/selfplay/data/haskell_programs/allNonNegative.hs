-- reflectable
allNonNegative :: [Int] -> Bool
allNonNegative [] = True
allNonNegative (x:xs) = x >= 0 && allNonNegative xs
