import Data.Char (digitToInt, isDigit)

parseAge :: String -> Either String Int
parseAge s
  | null digits = Left "empty"
  | not (all isDigit digits) = Left "not a number"
  | length digits > 3 || age > 150 = Left "out of range"
  | otherwise = Right age
  where
    digits = filter (/= ' ') s
    age = foldl (\acc d -> acc * 10 + digitToInt d) 0 digits
