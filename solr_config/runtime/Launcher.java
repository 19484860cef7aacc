import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.apache.solr.cloud.SolrZkServer;
import org.apache.solr.common.cloud.SolrZkClient;
import org.apache.solr.embedded.JettyConfig;
import org.apache.solr.embedded.JettySolrRunner;
import org.apache.zookeeper.CreateMode;

/**
 * Starts a real Solr HTTP server (Jetty + SolrDispatchFilter, context /solr, bound to 127.0.0.1)
 * from a solr home, as the project's local runtime. Run as a single-file source program:
 * java -cp 'lib/*' Launcher.java SOLR_HOME PORT [SECURITY_JSON]
 *
 * <p>With SECURITY_JSON on the node that runs the embedded ZooKeeper (-DzkRun), ZooKeeper starts
 * first, the file becomes its /security.json, and only then does Solr start: Solr never answers a
 * request before it authenticates.
 */
public class Launcher {
  public static void main(String[] args) throws Exception {
    String home = args[0];
    int port = Integer.parseInt(args[1]);
    SolrZkServer zooKeeper = null;
    if (args.length > 2 && System.getProperty("zkRun") != null) {
      zooKeeper = new SolrZkServer(System.getProperty("zkRun"), null, new File(home, "zoo_data"), home, port);
      zooKeeper.parseConfig();
      zooKeeper.start();
      String zkHost = zooKeeper.getClientString();
      installSecurity(zkHost, Path.of(args[2]));
      System.clearProperty("zkRun");
      System.setProperty("zkHost", zkHost);
    }
    JettyConfig config = JettyConfig.builder().setPort(port).setContext("/solr").build();
    JettySolrRunner solr = new JettySolrRunner(home, config);
    SolrZkServer ownZooKeeper = zooKeeper;
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    solr.stop();
                  } catch (Exception e) {
                    e.printStackTrace();
                  }
                  if (ownZooKeeper != null) {
                    ownZooKeeper.stop();
                  }
                }));
    solr.start();
    System.out.println("Solr " + org.apache.solr.client.api.util.SolrVersion.LATEST + " listening on " + solr.getBaseUrl());
    Thread.currentThread().join();
  }

  /** Writes the file to ZooKeeper's /security.json, where Solr reads it at start and watches it. */
  private static void installSecurity(String zkHost, Path file) throws Exception {
    byte[] content = Files.readAllBytes(file);
    try (SolrZkClient zk =
        new SolrZkClient.Builder()
            .withUrl(zkHost)
            .withTimeout(30, TimeUnit.SECONDS)
            .withConnTimeOut(60, TimeUnit.SECONDS)
            .build()) {
      if (zk.exists("/security.json", true)) {
        zk.setData("/security.json", content, -1, true);
      } else {
        zk.create("/security.json", content, CreateMode.PERSISTENT, true);
      }
    }
  }
}
