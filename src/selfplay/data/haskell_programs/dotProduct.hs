-- reflectable
dotProduct :: [Int] -> [Int] -> Int
dotProduct (x:xs) (y:ys) = x * y + dotProduct xs ys
dotProduct _ _ = 0
