-- reflectable
medianOfThree :: Int -> Int -> Int -> Int
medianOfThree a b c
  | (a <= b && b <= c) || (c <= b && b <= a) = b
  | (b <= a && a <= c) || (c <= a && a <= b) = a
  | otherwise = c
