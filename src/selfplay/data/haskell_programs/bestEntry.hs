bestEntry :: [(String, Int)] -> Maybe (String, Int)
bestEntry = foldl pick Nothing
  where
    pick Nothing e = Just e
    pick (Just best) e
      | snd e > snd best = Just e
      | otherwise = Just best
