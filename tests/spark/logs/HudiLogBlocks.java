// The blocks of Hudi log files as Apache Hudi 1.1.1's own reader (HoodieLogFormat) sees them:
// per block its type, instant and record count; corrupt blocks are reported as CORRUPT_BLOCK.
// For tests/spark/hudi_log_expected.sh. Usage:
//   java HudiLogBlocks zips FIXTURES_DIR   every log file in every table zip under FIXTURES_DIR
//   java HudiLogBlocks dirs DIR...         every log file under each DIR (its name as the key)
// Prints one JSON object: {"<zip or dir name>": {"<path in table>": [block, ...]}}
// ({"error": ...} instead of the blocks for a file Hudi's reader refuses).
import org.apache.hadoop.conf.Configuration;
import org.apache.hudi.common.model.HoodieLogFile;
import org.apache.hudi.common.model.HoodieRecord;
import org.apache.hudi.common.table.log.HoodieLogFormat;
import org.apache.hudi.common.table.log.block.HoodieDataBlock;
import org.apache.hudi.common.table.log.block.HoodieDeleteBlock;
import org.apache.hudi.common.table.log.block.HoodieLogBlock;
import org.apache.hudi.common.util.collection.ClosableIterator;
import org.apache.hudi.storage.HoodieStorage;
import org.apache.hudi.storage.StoragePath;
import org.apache.hudi.storage.hadoop.HoodieHadoopStorage;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;

import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

public class HudiLogBlocks {
  static boolean isLog(String name) {
    return name.contains(".log.") && !name.endsWith(".crc");
  }

  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') b.append('\\').append(c);
      else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
      else b.append(c);
    }
    return b.append('"').toString();
  }

  static String blocks(HoodieStorage storage, Path file) throws Exception {
    List<String> out = new ArrayList<>();
    HoodieLogFile logFile = new HoodieLogFile(new StoragePath(file.toUri()), Files.size(file));
    try (HoodieLogFormat.Reader reader = HoodieLogFormat.newReader(storage, logFile, null)) {
      while (reader.hasNext()) {
        HoodieLogBlock block = reader.next();
        long records = -1;
        if (block.getBlockType() == HoodieLogBlock.HoodieLogBlockType.PARQUET_DATA_BLOCK) {
          // Rows from the parquet footer: Hudi's Avro view of some of these blocks fails on
          // decimals whose parquet precision exceeds the header schema's (a Hudi 1.1.1 limit).
          HoodieLogBlock.HoodieLogBlockContentLocation at = block.getBlockContentLocation().get();
          byte[] content = new byte[(int) at.getBlockSize()];
          try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            f.seek(at.getContentPositionInLogFile());
            f.readFully(content);
          }
          Path tmp = Files.createTempFile("block", ".parquet");
          Files.write(tmp, content);
          try (ParquetFileReader pr = ParquetFileReader.open(
                   HadoopInputFile.fromPath(new org.apache.hadoop.fs.Path(tmp.toUri()), new Configuration()))) {
            records = pr.getRecordCount();
          }
          Files.delete(tmp);
        } else if (block instanceof HoodieDataBlock) {
          records = 0;
          try (ClosableIterator<HoodieRecord<Object>> it =
                   ((HoodieDataBlock) block).getRecordIterator(HoodieRecord.HoodieRecordType.AVRO)) {
            while (it.hasNext()) { it.next(); records++; }
          }
        } else if (block instanceof HoodieDeleteBlock) {
          records = ((HoodieDeleteBlock) block).getRecordsToDelete().length;
        }
        String instant = block.getLogBlockHeader().get(HoodieLogBlock.HeaderMetadataType.INSTANT_TIME);
        out.add("{\"type\":" + quote(block.getBlockType().name())
            + ",\"instant\":" + (instant == null ? "null" : quote(instant))
            + (records >= 0 ? ",\"records\":" + records : "") + "}");
      }
    }
    return "[" + String.join(",", out) + "]";
  }

  static String table(HoodieStorage storage, Path root) throws Exception {
    List<Path> logs;
    try (Stream<Path> s = Files.walk(root)) {
      logs = s.filter(p -> Files.isRegularFile(p) && isLog(p.getFileName().toString())).sorted()
          .collect(Collectors.toList());
    }
    List<String> entries = new ArrayList<>();
    for (Path p : logs) {
      String blocks;
      try {
        blocks = blocks(storage, p);
      } catch (Exception e) {
        // A file Hudi refuses: its error, for the test that expects a refusal too.
        blocks = "{\"error\":" + quote(String.valueOf(e)) + "}";
      }
      entries.add(quote(root.relativize(p).toString()) + ":" + blocks);
    }
    return "{" + String.join(",\n  ", entries) + "}";
  }

  public static void main(String[] args) throws Exception {
    HoodieStorage storage = new HoodieHadoopStorage("file:///", new Configuration());
    Map<String, String> tables = new TreeMap<>();
    if (args[0].equals("zips")) {
      Path fixtures = Paths.get(args[1]);
      List<Path> zips;
      try (Stream<Path> s = Files.walk(fixtures)) {
        zips = s.filter(p -> p.toString().endsWith(".zip")).sorted().collect(Collectors.toList());
      }
      Path work = Files.createTempDirectory("hudi-log-blocks");
      for (Path zip : zips) {
        String name = fixtures.relativize(zip).toString();
        Path root = work.resolve(Integer.toString(tables.size()));
        try (ZipFile z = new ZipFile(zip.toFile())) {
          for (Enumeration<? extends ZipEntry> e = z.entries(); e.hasMoreElements(); ) {
            ZipEntry entry = e.nextElement();
            String n = entry.getName();
            int slash = n.indexOf('/');
            if (entry.isDirectory() || n.startsWith("__MACOSX") || slash < 0 || !isLog(n)) continue;
            Path dest = root.resolve(n.substring(slash + 1));
            Files.createDirectories(dest.getParent());
            try (InputStream in = z.getInputStream(entry)) { Files.copy(in, dest); }
          }
        }
        tables.put(name, Files.exists(root) ? table(storage, root) : "{}");
      }
    } else {
      for (int i = 1; i < args.length; i++) {
        Path dir = Paths.get(args[i]);
        tables.put(dir.getFileName().toString(), table(storage, dir));
      }
    }
    StringBuilder b = new StringBuilder("{\n");
    int i = 0;
    for (Map.Entry<String, String> e : tables.entrySet()) {
      b.append(" ").append(quote(e.getKey())).append(": ").append(e.getValue())
          .append(++i < tables.size() ? ",\n" : "\n");
    }
    System.out.print(b.append("}\n"));
  }
}
