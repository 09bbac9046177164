// Reads and writes Hudi's storage-lock file with Apache Hudi 1.1.1's own classes
// (StorageLockData / StorageLockFile), for tests/spark/lock_interop.sh.
//   java LockJson write FILE EXPIRED VALID_UNTIL OWNER   (writes the JSON Java writes)
//   java LockJson read FILE                              (prints "expired validUntil owner")
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Paths;

public class LockJson {
  public static void main(String[] args) throws Exception {
    if (args[0].equals("write")) {
      StorageLockData data = new StorageLockData(
          Boolean.parseBoolean(args[2]), Long.parseLong(args[3]), args[4]);
      Files.createDirectories(Paths.get(args[1]).getParent());
      Files.write(Paths.get(args[1]), StorageLockFile.toByteArray(data));
    } else {
      byte[] bytes = Files.readAllBytes(Paths.get(args[1]));
      StorageLockFile f = StorageLockFile.createFromStream(new ByteArrayInputStream(bytes), "etag");
      System.out.println(f.isExpired() + " " + f.getValidUntilMs() + " " + f.getOwner());
    }
  }
}
