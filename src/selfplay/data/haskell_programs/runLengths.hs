import Data.List (group)

runLengths :: String -> [(Char, Int)]
runLengths s = [(c, length run) | run@(c:_) <- group s]
