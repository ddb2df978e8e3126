-- reflectable
intPower :: Int -> Int -> Int
intPower base ex
  | ex <= 0 = 1
  | otherwise = base * intPower base (ex - 1)
