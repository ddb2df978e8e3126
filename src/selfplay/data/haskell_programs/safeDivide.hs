safeDivide :: Int -> Int -> Maybe Int
safeDivide a b
  | b == 0 = Nothing
  | b == -1 = Just (negate a)
  | otherwise = Just (a `div` b)
