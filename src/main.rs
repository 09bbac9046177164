fn main() {
    std::process::exit(hudi_edge::cli::main());
}
