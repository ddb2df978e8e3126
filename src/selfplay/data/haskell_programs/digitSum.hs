digitSum :: Integer -> Int
digitSum n = go (abs n) 0
  where
    go 0 acc = acc
    go m acc = go (m `div` 10) (acc + fromIntegral (m `mod` 10))
