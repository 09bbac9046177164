// The block-index depth of an HFile as HBase's own reader (shaded in the Hudi 0.15.0 bundle)
// reads its trailer. For tests/spark/hfile_multilevel.sh. Usage: java HBaseHFileLevels HFILE
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.FixedFileTrailer;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.HFile;

public class HBaseHFileLevels {
  public static void main(String[] args) throws Exception {
    Configuration conf = new Configuration();
    Path path = new Path(new java.io.File(args[0]).toURI());
    try (HFile.Reader r = HFile.createReader(FileSystem.getLocal(conf), path, conf)) {
      FixedFileTrailer t = r.getTrailer();
      System.out.println("{\"levels\":" + t.getNumDataIndexLevels() + ",\"root_index_entries\":"
          + t.getDataIndexCount() + ",\"entries\":" + t.getEntryCount() + "}");
    }
  }
}
