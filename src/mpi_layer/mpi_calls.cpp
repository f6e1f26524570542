// The blocking MPI calls the layer records as spans: each wrapper tells the tool (when attached)
// before and after calling PMPI, with the bytes of this rank's buffer and the other rank. Nothing
// else: no lock, no allocation, no system call (MPI's own type and size queries are local reads).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cstdint>

#include "mpi_layer/layer.hpp"

#define KOB_EXPORT extern "C" __attribute__((visibility("default")))

namespace kob_mpi {

std::atomic<const kob_mpi_tool*> g_span_tool{nullptr};

namespace {

std::uint64_t payload(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || PMPI_Type_size(type, &size) != MPI_SUCCESS || size <= 0) return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

int comm_size(MPI_Comm comm) {
  int n = 0;
  return PMPI_Comm_size(comm, &n) == MPI_SUCCESS ? n : 0;
}

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

KOB_EXPORT int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  Span s(kob_mpi_send);
  const int rc = PMPI_Send(buf, count, type, dest, tag, comm);
  if (s.on()) s.end(payload(count, type), dest);
  return rc;
}

KOB_EXPORT int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  Span s(kob_mpi_recv);
  if (!s.on()) return PMPI_Recv(buf, count, type, source, tag, comm, status);
  // The status tells who sent and how much (MPI_ANY_SOURCE, a shorter message): ours when the
  // program ignores it.
  MPI_Status own;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &own : status;
  const int rc = PMPI_Recv(buf, count, type, source, tag, comm, st);
  int got = 0;
  if (rc != MPI_SUCCESS || PMPI_Get_count(st, type, &got) != MPI_SUCCESS || got == MPI_UNDEFINED) got = 0;
  s.end(payload(got, type), rc == MPI_SUCCESS ? st->MPI_SOURCE : source);
  return rc;
}

KOB_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  Span s(kob_mpi_wait);
  const int rc = PMPI_Wait(request, status);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  Span s(kob_mpi_waitall);
  const int rc = PMPI_Waitall(count, requests, statuses);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Barrier(MPI_Comm comm) {
  Span s(kob_mpi_barrier);
  const int rc = PMPI_Barrier(comm);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  Span s(kob_mpi_bcast);
  const int rc = PMPI_Bcast(buf, count, type, root, comm);
  if (s.on()) s.end(payload(count, type), root);
  return rc;
}

KOB_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  Span s(kob_mpi_reduce);
  const int rc = PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
  if (s.on()) s.end(payload(count, type), root);
  return rc;
}

KOB_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Span s(kob_mpi_allreduce);
  const int rc = PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
  if (s.on()) s.end(payload(count, type), -1);
  return rc;
}

KOB_EXPORT int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  Span s(kob_mpi_allgather);
  const int rc = PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), -1);
  return rc;
}

KOB_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  Span s(kob_mpi_alltoall);
  const int rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  if (s.on()) s.end(payload(sendcount, sendtype) * static_cast<std::uint64_t>(comm_size(comm)), -1);
  return rc;
}

KOB_EXPORT int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Span s(kob_mpi_gather);
  const int rc = PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), root);
  return rc;
}

KOB_EXPORT int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Span s(kob_mpi_scatter);
  const int rc = PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (s.on()) s.end(payload(recvcount, recvtype), root);
  return rc;
}

KOB_EXPORT int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  Span s(kob_mpi_sendrecv);
  const int rc = PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm,
                               status);
  if (s.on()) s.end(payload(sendcount, sendtype), dest);
  return rc;
}

KOB_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  Span s(kob_mpi_waitany);
  const int rc = PMPI_Waitany(count, requests, index, status);
  s.end(0, -1);
  return rc;
}

KOB_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
  Span s(kob_mpi_waitsome);
  const int rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  s.end(0, -1);
  return rc;
}

namespace {
// Bytes of this rank's part of a v-collective: the sum of its counts.
std::uint64_t payload_v(const int counts[], MPI_Datatype type, int n) {
  std::uint64_t sum = 0;
  for (int i = 0; counts != nullptr && i < n; ++i) sum += payload(counts[i], type);
  return sum;
}
}  // namespace

KOB_EXPORT int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  Span s(kob_mpi_allgatherv);
  const int rc = PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), -1);
  return rc;
}

KOB_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                             const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  Span s(kob_mpi_alltoallv);
  const int rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
  if (s.on()) s.end(payload_v(sendcounts, sendtype, comm_size(comm)), -1);
  return rc;
}

KOB_EXPORT int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                           const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Span s(kob_mpi_gatherv);
  const int rc = PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
  if (s.on()) s.end(payload(sendcount, sendtype), root);
  return rc;
}

KOB_EXPORT int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Span s(kob_mpi_scatterv);
  const int rc = PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
  if (s.on()) s.end(payload(recvcount, recvtype), root);
  return rc;
}

KOB_EXPORT int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                                  MPI_Comm comm) {
  Span s(kob_mpi_reduce_scatter);
  const int rc = PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  if (s.on()) s.end(payload_v(recvcounts, type, comm_size(comm)), -1);
  return rc;
}

KOB_EXPORT int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  Span s(kob_mpi_scan);
  const int rc = PMPI_Scan(sendbuf, recvbuf, count, type, op, comm);
  if (s.on()) s.end(payload(count, type), -1);
  return rc;
}
