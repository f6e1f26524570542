// Included right after <mpi.h> by the layer's files that use it: every MPI symbol they reference
// is a weak reference, so that the layer has no link to any MPI library (no DT_NEEDED), loads into
// any process, and binds to whatever MPI the program brought. It is used only after
// family_matches(); the build links with -z defs, so a symbol missing here fails the build.
#pragma once

#pragma weak PMPI_Init
#pragma weak PMPI_Init_thread
#pragma weak PMPI_Finalize
#pragma weak PMPI_Initialized
#pragma weak PMPI_Finalized
#pragma weak PMPI_Comm_dup
#pragma weak PMPI_Comm_free
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Comm_set_errhandler
#pragma weak PMPI_Error_string
#pragma weak PMPI_Send
#pragma weak PMPI_Recv
#pragma weak PMPI_Iprobe
#pragma weak PMPI_Get_count
#pragma weak PMPI_Type_size

#if defined(KOB_MPI_OPEN_MPI)
// Open MPI's predefined handles are the addresses of these objects.
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_errors_return
#endif
