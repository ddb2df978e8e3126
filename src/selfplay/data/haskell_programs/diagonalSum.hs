diagonalSum :: [[Int]] -> Int
diagonalSum rows = sum [x | (i, row) <- zip [0 ..] rows, x <- take 1 (drop i row)]
