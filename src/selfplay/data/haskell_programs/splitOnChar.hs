splitOnChar :: Char -> String -> [String]
splitOnChar sep s =
  case break (== sep) s of
    (piece, []) -> [piece]
    (piece, _ : rest) -> piece : splitOnChar sep rest
