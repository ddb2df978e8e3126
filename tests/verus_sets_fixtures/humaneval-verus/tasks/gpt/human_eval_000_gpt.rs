// an unverified draft that the loader must not read
fn main() {}
