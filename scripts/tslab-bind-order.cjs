// Preloaded into the tslab kernel (scripts/tslab-kernel.sh): bind its sockets one after another, IOPub first.
//
// tslab binds its five ZeroMQ sockets at once and starts reading the shell socket before they are all bound.
// Under load the first kernel_info_request can reach the shell socket while IOPub is still binding; tslab
// then publishes its "busy" status on IOPub, zeromq refuses a send during a bind ("EBUSY: Socket is blocked
// by a bind or unbind operation"), the request is never answered and JupyterLab waits on a kernel that
// never becomes ready. Binding in order (IOPub is the first socket tslab binds) means no request can
// arrive before IOPub is ready.
const { ZmqServer } = require('tslab/dist/jupyter.js');

const bindSocket = ZmqServer.prototype.bindSocket;
let previous = Promise.resolve();
ZmqServer.prototype.bindSocket = function bindInOrder(sock, port) {
  previous = previous.then(() => bindSocket.call(this, sock, port));
  return previous;
};
