// a file without the section markers
fn main() {}
