addMaybe :: Maybe Int -> Maybe Int -> Maybe Int
addMaybe mx my =
  case (mx, my) of
    (Just x, Just y) -> Just (x + y)
    (Just x, Nothing) -> Just x
    (Nothing, Just y) -> Just y
    (Nothing, Nothing) -> Nothing
