//! CLI.
pub fn main() -> i32 {
    0
}
