describeEntry :: (String, Int) -> String
describeEntry (name, score) = label ++ ": " ++ show score ++ verdict
  where
    label = if null name then "anonymous" else name
    verdict
      | score >= 50 = " (pass)"
      | otherwise = " (fail)"
