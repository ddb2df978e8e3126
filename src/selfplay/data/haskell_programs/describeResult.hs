describeResult :: Either String Int -> String
describeResult r =
  case r of
    Left err -> "error: " ++ err
    Right n
      | n < 0 -> "negative " ++ show (abs n)
      | otherwise -> "ok " ++ show n
