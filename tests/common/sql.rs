//! The SQL tests' shared pieces: the query data of `tests/data/sql` and the tables it names.

use serde_json::Value;

/// A file of `tests/data/sql` as JSON.
pub fn data(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/sql")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("sql data")).expect("json")
}

/// `CREATE EXTERNAL TABLE` for each of a query's tables, with its read options.
pub fn create_tables(tables: &Value) -> String {
    let mut sql = String::new();
    for (name, t) in tables.as_object().expect("tables") {
        let path = super::table_path(t["fixture"].as_str().expect("fixture"));
        let options: Vec<String> = ["query", "as_of", "start", "end"]
            .iter()
            .filter_map(|k| t[*k].as_str().map(|v| format!("'{k}' '{v}'")))
            .collect();
        let options = match options.is_empty() {
            true => String::new(),
            false => format!(" OPTIONS ({})", options.join(", ")),
        };
        sql += &format!(
            "CREATE EXTERNAL TABLE {name} STORED AS HUDI LOCATION '{}'{options};\n",
            path.display()
        );
    }
    sql
}
