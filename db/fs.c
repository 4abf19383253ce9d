/* Which file system a database lives on. SQLite's WAL keeps its index in shared memory that
 * only processes of one machine see, and POSIX locks on network file systems hold across
 * machines only as far as the server's lock manager does, so two tuners on two nodes writing
 * one WAL database on NFS or Lustre corrupt it (MIOpen's shared performance databases were
 * lost that way). statfs's f_type tells the file systems apart; the table below lists the
 * network and cluster ones, with the magic numbers of linux/magic.h where it has them and of
 * the file systems' own sources otherwise. FUSE counts as network: the kernel cannot tell
 * sshfs or a cluster client from a local FUSE file system. */
#include "db_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

static const struct {
    uint32_t magic;
    const char *name;
} network_fs[] = {
    {0x00006969u, "nfs"},      /* NFS_SUPER_MAGIC, linux/magic.h */
    {0x0000517Bu, "smb"},      /* SMB_SUPER_MAGIC */
    {0xFF534D42u, "cifs"},     /* CIFS_SUPER_MAGIC */
    {0xFE534D42u, "smb2"},     /* SMB2_SUPER_MAGIC */
    {0x0BD00BD0u, "lustre"},   /* LL_SUPER_MAGIC, lustre/include/uapi/linux/lustre/lustre_user.h */
    {0x47504653u, "gpfs"},     /* "GPFS", IBM Storage Scale */
    {0x19830326u, "beegfs"},   /* BEEGFS_MAGIC (formerly fhgfs), beegfs client sources */
    {0x00C36400u, "ceph"},     /* CEPH_SUPER_MAGIC */
    {0x01021997u, "9p"},       /* V9FS_MAGIC */
    {0x65735546u, "fuse"},     /* FUSE_SUPER_MAGIC */
    {0x5346414Fu, "afs"},      /* AFS_SUPER_MAGIC */
    {0x6B414653u, "kafs"},     /* AFS_FS_MAGIC */
    {0x73757245u, "coda"},     /* CODA_SUPER_MAGIC */
    {0x0000564Cu, "ncp"},      /* NCP_SUPER_MAGIC */
    {0xAAD7AAEAu, "panfs"},    /* Panasas PanFS */
    {0x20030528u, "orangefs"}, /* PVFS2_SUPER_MAGIC, OrangeFS */
    {0x01161970u, "gfs2"},     /* GFS2_MAGIC, linux/gfs2_ondisk.h (shared-disk cluster) */
    {0x7461636Fu, "ocfs2"},    /* OCFS2_SUPER_MAGIC (shared-disk cluster) */
    {0x013111A8u, "ibrix"},    /* HPE IBRIX */
};
#define NNETWORK (sizeof network_fs / sizeof network_fs[0])

/* The nearest existing directory of path (path itself when it exists). */
static int existing_ancestor(const char *path, char *buf, size_t n, fdt_err *e)
{
    if (snprintf(buf, n, "%s", path) >= (int)n)
        return fdt_err_set(e, "%s: path too long", path);
    struct statfs sf;
    while (statfs(buf, &sf) != 0) {
        if (errno != ENOENT && errno != ENOTDIR)
            return fdt_err_set(e, "%s: %s", buf, strerror(errno));
        char *slash = strrchr(buf, '/');
        if (!slash) {
            snprintf(buf, n, ".");
            return 0;
        }
        if (slash == buf) {
            buf[1] = 0;
            return 0;
        }
        *slash = 0;
    }
    return 0;
}

/* FDTUNE_TEST_FSTYPE: a name of the table, or "local". */
static int test_fstype(const char *v, char *name, size_t n, int *network, fdt_err *e)
{
    if (!strcmp(v, "local"))
        return 0;
    for (size_t i = 0; i < NNETWORK; i++)
        if (!strcmp(v, network_fs[i].name)) {
            snprintf(name, n, "%s", v);
            *network = 1;
            return 0;
        }
    return fdt_err_set(e, "FDTUNE_TEST_FSTYPE=%s: not a file system fdtune knows (local, nfs, "
                       "lustre, gpfs, beegfs, cifs, fuse, ...)", v);
}

int fdt_db_fs_kind(const char *path, char *name, size_t n, int *network, fdt_err *e)
{
    *network = 0;
    if (n)
        name[0] = 0;
    const char *t = getenv("FDTUNE_TEST_FSTYPE");
    if (t && *t)
        return test_fstype(t, name, n, network, e);
    char dir[4096];
    struct statfs sf;
    if (existing_ancestor(path, dir, sizeof dir, e))
        return -1;
    if (statfs(dir, &sf) != 0)
        return fdt_err_set(e, "%s: %s", dir, strerror(errno));
    uint32_t magic = (uint32_t)sf.f_type;
    for (size_t i = 0; i < NNETWORK; i++)
        if (network_fs[i].magic == magic) {
            snprintf(name, n, "%s", network_fs[i].name);
            *network = 1;
        }
    return 0;
}
