function Double(x: int): int
{
  2 * x
}
