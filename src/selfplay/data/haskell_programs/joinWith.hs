import Data.List (intercalate)

joinWith :: String -> [String] -> String
joinWith sep = intercalate sep . filter (not . null)
