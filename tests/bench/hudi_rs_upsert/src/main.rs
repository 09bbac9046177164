//! `hudi-rs-upsert TABLE INPUT.arrow`: one upsert of the Arrow IPC rows through hudi-rs'
//! writer; prints `{"seconds": .., "updates": .., "inserts": ..}`.

use std::time::Instant;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (table, input) = (&args[1], &args[2]);
    let bytes = std::fs::read(input)?;
    let reader = arrow::ipc::reader::StreamReader::try_new(std::io::Cursor::new(bytes), None)?;
    let batches = reader.collect::<Result<Vec<_>, _>>()?;
    let started = Instant::now();
    let mut t = hudi::table::Table::new(table).await?;
    let result = t.upsert(batches).await?;
    println!(
        "{{\"seconds\": {:.3}, \"updates\": {}, \"writes\": {}}}",
        started.elapsed().as_secs_f64(),
        result.num_updates,
        result.num_writes
    );
    Ok(())
}
