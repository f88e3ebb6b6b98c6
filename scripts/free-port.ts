// A TCP port nobody listens on now, for the servers the tests and scripts start (JupyterLab, slurmctld).
import * as net from "node:net";

/** A free port on 127.0.0.1 (a server started a moment later takes it; collisions are unlikely). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}
