-- reflectable
alternatingSum :: [Int] -> Int
alternatingSum [] = 0
alternatingSum (x:xs) = x - alternatingSum xs
