// The MPI calls the layer records as spans: each wrapper tells the tool (when attached) before
// and after calling PMPI, with the bytes of this rank's buffer and the other rank. Nothing else:
// no lock, no allocation, no system call (MPI's own type and size queries are local reads).
//
// No <mpi.h> here: the wrappers take every handle (MPI_Comm, MPI_Datatype, MPI_Op) as a full
// register (Handle) and pass it on as it came, so that a layer built for one MPI ABI forwards the
// calls of a program built for the other untouched (Open MPI's handles are pointers, the MPICH
// family's ints: declared as int, a pointer would be cut to 32 bits on its way through). The
// PMPI functions are weak: the layer loads, and forwards, whatever MPI the process has. Only when
// the family is the one it was built for (family.cpp) and the tool attached are handles looked
// at, in mpi_types.cpp, which knows the real types.
#include <cstdint>

#include "mpi_layer/handles.hpp"
#include "mpi_layer/layer.hpp"

#define KOB_EXPORT extern "C" __attribute__((visibility("default")))
#define KOB_WEAK __attribute__((weak))

using kob_mpi::Handle;

extern "C" {
int PMPI_Send(const void* buf, int count, Handle type, int dest, int tag, Handle comm) KOB_WEAK;
int PMPI_Recv(void* buf, int count, Handle type, int source, int tag, Handle comm, void* status) KOB_WEAK;
int PMPI_Wait(void* request, void* status) KOB_WEAK;
int PMPI_Waitall(int count, void* requests, void* statuses) KOB_WEAK;
int PMPI_Barrier(Handle comm) KOB_WEAK;
int PMPI_Bcast(void* buf, int count, Handle type, int root, Handle comm) KOB_WEAK;
int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, int root, Handle comm) KOB_WEAK;
int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm) KOB_WEAK;
int PMPI_Allgather(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, Handle comm) KOB_WEAK;
int PMPI_Alltoall(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, Handle comm) KOB_WEAK;
int PMPI_Gather(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, int root, Handle comm) KOB_WEAK;
int PMPI_Scatter(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, int root, Handle comm) KOB_WEAK;
int PMPI_Sendrecv(const void* sendbuf, int sendcount, Handle sendtype, int dest, int sendtag, void* recvbuf, int recvcount, Handle recvtype, int source, int recvtag, Handle comm, void* status) KOB_WEAK;
int PMPI_Waitany(int count, void* requests, int* index, void* status) KOB_WEAK;
int PMPI_Waitsome(int incount, void* requests, int* outcount, int indices[], void* statuses) KOB_WEAK;
int PMPI_Allgatherv(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, const int recvcounts[], const int displs[], Handle recvtype, Handle comm) KOB_WEAK;
int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], Handle sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], Handle recvtype, Handle comm) KOB_WEAK;
int PMPI_Gatherv(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, const int recvcounts[], const int displs[], Handle recvtype, int root, Handle comm) KOB_WEAK;
int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, int root, Handle comm) KOB_WEAK;
int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], Handle type, Handle op, Handle comm) KOB_WEAK;
int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm) KOB_WEAK;
}

namespace kob_mpi {

std::atomic<const kob_mpi_tool*> g_span_tool{nullptr};

namespace {

// Begin at construction; end() gives the call's bytes and peer, once PMPI has returned.
class Span {
 public:
  explicit Span(std::uint32_t call) : tool_(g_span_tool.load(std::memory_order_acquire)), call_(call) {
    if (tool_ != nullptr) tool_->mpi_begin(call_);
  }
  bool on() const { return tool_ != nullptr; }
  void end(std::uint64_t bytes, int peer) {
    if (tool_ != nullptr) tool_->mpi_end(call_, bytes, peer);
  }

 private:
  const kob_mpi_tool* tool_;
  std::uint32_t call_;
};

}  // namespace
}  // namespace kob_mpi

using kob_mpi::comm_size;
using kob_mpi::payload;
using kob_mpi::Span;

KOB_EXPORT int MPI_Send(const void* buf, int count, Handle type, int dest, int tag, Handle comm) {
  Span s(kob_mpi_send);
  const int rc = PMPI_Send(buf, count, type, dest, tag, comm);
  if (s.on()) s.end(payload(count, type), dest);
  return rc;
}

KOB_EXPORT int MPI_Recv(void* buf, int count, Handle type, int source, int tag, Handle comm, void* status) {
  Span s(kob_mpi_recv);
  if (!s.on()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  // The status tells who sent and how much (MPI_ANY_SOURCE, a shorter message): ours when the
  // program ignores it (mpi_types.cpp, where MPI_Status is known).
  std::uint64_t bytes = 0;
  int peer = source;
  const int rc = kob_mpi::recv_recorded(buf, count, type, source, tag, comm, status, &bytes, &peer);
  s.end(bytes, peer);
  return rc;
}

KOB_EXPORT int MPI_Wait(void* request, void* status) {
  Span s(kob_mpi_wait);
  const int rc = PMPI_Wait(request, status);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Waitall(int count, void* requests, void* statuses) {
  Span s(kob_mpi_waitall);
  const int rc = PMPI_Waitall(count, requests, statuses);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Barrier(Handle comm) {
  Span s(kob_mpi_barrier);
  const int rc = PMPI_Barrier(comm);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Bcast(void* buf, int count, Handle type, int root, Handle comm) {
  Span s(kob_mpi_bcast);
  const int rc = PMPI_Bcast(buf, count, type, root, comm);
  if (s.on()) s.end(payload(count, type), root);
  return rc;
}

KOB_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, int root, Handle comm) {
  Span s(kob_mpi_reduce);
  const int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  if (s.on()) s.end(payload(count, type), root);
  return rc;
}

KOB_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm) {
  Span s(kob_mpi_allreduce);
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  if (s.on()) s.end(payload(count, type), -1);
  return rc;
}

KOB_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount,
                             Handle recvtype, Handle comm) {
  Span s(kob_mpi_allgather);
  const int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), -1);
  return rc;
}

KOB_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount,
                            Handle recvtype, Handle comm) {
  Span s(kob_mpi_alltoall);
  const int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  if (s.on()) s.end(payload(sendcount, sendtype) * static_cast<std::uint64_t>(comm_size(comm)), -1);
  return rc;
}

KOB_EXPORT int MPI_Gather(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount,
                          Handle recvtype, int root, Handle comm) {
  Span s(kob_mpi_gather);
  const int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), root);
  return rc;
}

KOB_EXPORT int MPI_Scatter(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount,
                           Handle recvtype, int root, Handle comm) {
  Span s(kob_mpi_scatter);
  const int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (s.on()) s.end(payload(recvcount, recvtype), root);
  return rc;
}

KOB_EXPORT int MPI_Sendrecv(const void* sendbuf, int sendcount, Handle sendtype, int dest, int sendtag, void* recvbuf,
                            int recvcount, Handle recvtype, int source, int recvtag, Handle comm, void* status) {
  Span s(kob_mpi_sendrecv);
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                               status);
  if (s.on()) s.end(payload(sendcount, sendtype), dest);
  return rc;
}

KOB_EXPORT int MPI_Waitany(int count, void* requests, int* index, void* status) {
  Span s(kob_mpi_waitany);
  const int rc = PMPI_Waitany(count, requests, index, status);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Waitsome(int incount, void* requests, int* outcount, int indices[], void* statuses) {
  Span s(kob_mpi_waitsome);
  const int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  s.end(0, -1);
  return rc;
}

namespace {
// Bytes of this rank's part of a v-collective: the sum of its counts.
std::uint64_t payload_v(const int counts[], Handle type, int n) {
  std::uint64_t sum = 0;
  for (int i = 0; counts != nullptr && i < n; ++i) sum += payload(counts[i], type);
  return sum;
}
}  // namespace

KOB_EXPORT int MPI_Allgatherv(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, const int recvcounts[],
                              const int displs[], Handle recvtype, Handle comm) {
  Span s(kob_mpi_allgatherv);
  const int rc = PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), -1);
  return rc;
}

KOB_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], Handle sendtype, void* recvbuf,
                             const int recvcounts[], const int rdispls[], Handle recvtype, Handle comm) {
  Span s(kob_mpi_alltoallv);
  const int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  if (s.on()) s.end(payload_v(sendcounts, sendtype, comm_size(comm)), -1);
  return rc;
}

KOB_EXPORT int MPI_Gatherv(const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, const int recvcounts[],
                           const int displs[], Handle recvtype, int root, Handle comm) {
  Span s(kob_mpi_gatherv);
  const int rc = PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), root);
  return rc;
}

KOB_EXPORT int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], Handle sendtype, void* recvbuf,
                            int recvcount, Handle recvtype, int root, Handle comm) {
  Span s(kob_mpi_scatterv);
  const int rc = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (s.on()) s.end(payload(recvcount, recvtype), root);
  return rc;
}

KOB_EXPORT int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], Handle type, Handle op,
                                  Handle comm) {
  Span s(kob_mpi_reduce_scatter);
  const int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  if (s.on()) s.end(payload_v(recvcounts, type, comm_size(comm)), -1);
  return rc;
}

KOB_EXPORT int MPI_Scan(const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm) {
  Span s(kob_mpi_scan);
  const int rc = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  if (s.on()) s.end(payload(count, type), -1);
  return rc;
}
