/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: a small HTTP/1.1 file server for untrusted URLs.
 *
 *     safe-httpd [OPTIONS] ROOT [PORT]
 *
 * Serves ROOT on --bind ADDR (default 127.0.0.1) port PORT (default 8080; 0
 * picks a free port): GET and HEAD of files (Content-Type from the
 * user.mime_type xattr, else mime.types, else a built-in table; ETag and
 * Last-Modified; byte ranges, several as multipart/byteranges; If-Range,
 * If-None-Match, If-Modified-Since), index.html or a listing for
 * directories. With --writable, also PUT (the body is published atomically
 * with its Content-Type as user.mime_type, replacing any old file) and
 * DELETE, behind --auth-file credentials (upload.c). Names starting with '.'
 * are neither listed nor served unless --dotfiles; the library's temporary
 * names never are. The reference is safe-httpd(1).
 *
 * Security design: the URL path is percent-decoded exactly once and handed to
 * libsafeopen as it is; the server itself never looks for "..", "/" or links
 * in it. The library is the only thing keeping requests inside ROOT:
 * escapes come back as EXDEV or ELOOP (403), and names that do not exist
 * beneath ROOT as ENOENT (404). Safe by default: read-only, loopback only,
 * no dotfiles; writes on any other address need credentials.
 *
 * Connection model: an epoll(7) loop per thread (--threads, default one per
 * CPU up to 8), each with its own SO_REUSEPORT listening socket and its own
 * connections, accepted with accept4(SOCK_NONBLOCK) and never handed to
 * another thread (under socket activation, systemd's sockets instead,
 * each shared by the loops that take it: activated_sockets()); every
 * socket non-blocking and edge-triggered. A connection is a small state
 * machine (reading a head, reading a body, sending, lingering before the
 * close) that runs until its socket would block, so an idle or slow
 * client costs a few KiB of memory and never delays anybody else. Each
 * state has one timeout, and each timeout list is kept in deadline order
 * (a deadline is always "now + the list's limit"), so finding and expiring
 * the next deadline is O(1):
 *   - request head: --head-timeout seconds for the whole head, counted from
 *     the connection's opening or from the first byte of a keep-alive
 *     request (slowloris cannot stretch it by trickling bytes);
 *   - keep-alive idle: --idle-timeout between requests;
 *   - body and response: --body-timeout without any progress;
 *   - lingering close: 1 s.
 * At --max-conns connections (all loops together), a new connection first
 * evicts the connection of its loop that has been idle longest between
 * requests; only when none is idle does it get a 503. File bodies go out
 * with sendfile(2), small ones in the same send(2) as the head. Filesystem
 * calls are short and stay synchronous.
 */
#define _GNU_SOURCE /* strsignal */
#include "config.h"
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>

#include "httpd.h"

/* ------------------------------------------------------------------ configuration */

struct config cfg = {
	.resolve = SAFE_RESOLVE_BENEATH | SAFE_RESOLVE_NO_MAGICLINKS,
	.head_timeout_ms = 10000,
	.idle_timeout_ms = 15000,
	.body_timeout_ms = 60000,
	.max_conns = 1024,
	.max_body = 64ULL << 20,
};

int rootfd = -1;
FILE *access_log;
atomic_bool stopping;
atomic_uint total_conns;
int wakefd = -1;
char boundary[24];

#define ACT_MAX 16 /* sockets from systemd at most */

/* What main() needs besides cfg. */
/* An address of either family, read without casts between the two. */
union sockaddr_any {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

struct startup {
	const char *root, *log_path, *auth_path, *mime_path;
	bool mime_required; /* --mime-types given: a file that cannot be read is an error */
	union sockaddr_any addr;
	socklen_t addr_len;
	int nloops;
	/* socket activation (LISTEN_FDS): the sockets and their addresses */
	int nact;
	int act_fd[ACT_MAX];
	union sockaddr_any act_addr[ACT_MAX];
	const char *user;   /* --user USER[:GROUP], NULL: none */
	uid_t run_uid;      /* the user the server serves as (after --user) */
	gid_t run_gid;
};

static const char usage_text[] =
	"Usage: safe-httpd [OPTIONS] ROOT [PORT]\n"
	"Serve the directory ROOT over HTTP/1.1 on ADDR:PORT (--bind, default\n"
	"127.0.0.1; PORT default 8080, 0 picks a free port). The address is printed\n"
	"as \"listening on ADDR:PORT\" (\"[ADDR]:PORT\" for IPv6).\n"
	"\n"
	"  GET, HEAD     files (Content-Type from the user.mime_type xattr, else\n"
	"                mime.types, else a built-in table; ETag, Last-Modified;\n"
	"                byte ranges, several as multipart/byteranges; If-Range,\n"
	"                If-None-Match, If-Modified-Since); for a directory its\n"
	"                index.html, else a listing with sizes and dates (a URL\n"
	"                without the final \"/\" is redirected)\n"
	"  PUT, DELETE   only with --writable (405 otherwise): store the body\n"
	"                atomically, replacing any old file (the Content-Type is\n"
	"                saved as user.mime_type); remove a file or an empty\n"
	"                directory\n"
	"\n"
	"URL paths are percent-decoded once and resolved by libsafeopen beneath ROOT:\n"
	"escapes get 403, missing names 404. Names starting with '.' get 404 and are\n"
	"not listed (unless --dotfiles); the library's temporary names never are.\n"
	"\n"
	"Options:\n"
	"  -b, --bind ADDR         listen on ADDR, IPv4 or IPv6 (default 127.0.0.1)\n"
	"  -w, --writable          allow PUT and DELETE; on an address other than\n"
	"                          loopback only with --auth-file\n"
	"      --read-only         refuse PUT and DELETE with 405 (the default)\n"
	"  -a, --auth-file FILE    writes need credentials from FILE, one a line:\n"
	"                          USER:HASH (HTTP Basic; a crypt(3) hash as\n"
	"                          htpasswd -B or mkpasswd write it), USER:PASSWORD\n"
	"                          (plain text, warned about) or a token without a\n"
	"                          colon (Authorization: Bearer TOKEN); FILE must be\n"
	"                          owned by the server's user, mode 0600 or stricter\n"
#ifndef HAVE_CRYPT_R
	"                          (this build: hashed passwords: not built, no crypt_r)\n"
#endif
	"  -D, --mkdirs            PUT creates missing parent directories (else 404)\n"
	"      --dotfiles          serve and list names starting with '.'\n"
	"      --mime-types FILE   extensions to types (default /etc/mime.types when\n"
	"                          it exists); the built-in table fills the gaps\n"
	"      --in-root           treat ROOT as \"/\" (absolute links and \"..\" stay\n"
	"                          inside) instead of refusing them\n"
	"      --walker            use the library's userspace walker, not openat2(2)\n"
	"      --symlinks MODE     which symbolic links inside ROOT are followed:\n"
	"                          follow (every one, the default), owner-match\n"
	"                          (only a link owned by the owner of what it leads\n"
	"                          to) or none; a refused link gets 403 and is not\n"
	"                          listed\n"
	"      --no-listing        no directory listings: a directory without\n"
	"                          index.html gets 403\n"
	"      --max-conns N       open connections at most (default 1024); when all\n"
	"                          are busy, the connection idle longest between\n"
	"                          requests (in the same loop) is closed for a new\n"
	"                          one, and only when none is idle does the new one\n"
	"                          get 503\n"
	"      --threads N         event loops, one thread each (default: one per\n"
	"                          CPU, at most 8); each loop serves any number of\n"
	"                          connections, so idle clients never hold a thread\n"
	"      --head-timeout S    a request head must arrive complete within S\n"
	"                          seconds of the connection's opening or of its first\n"
	"                          byte (default 10): 408, then close\n"
	"      --idle-timeout S    close a keep-alive connection idle for S seconds\n"
	"                          between requests (default 15)\n"
	"      --body-timeout S    close a connection whose request body or response\n"
	"                          makes no progress for S seconds (default 60)\n"
	"      --timeout S         set all three timeouts to S seconds\n"
	"      --max-body BYTES    largest PUT body (default 67108864): 413\n"
	"  -l, --log FILE          append the access log to FILE instead of standard\n"
	"                          error (also --access-log FILE)\n"
	"      --log-format F      common (the default), combined (common, then the\n"
	"                          Referer and User-Agent) or timed (combined, then\n"
	"                          the request's time in seconds)\n"
	"  -q, --quiet             no access log\n"
	"  -u, --user USER[:GROUP] once the sockets are bound and the files open,\n"
	"                          run as USER and GROUP (default: USER's group),\n"
	"                          with no other group; started as root only\n"
	"  -h, --help              show this help and exit\n"
	"  -V, --version           show the version and exit\n"
	"\n"
	"Timeouts are whole seconds from 1 to 3600. The access log has one line per\n"
	"response (common: host ident user [time] \"request line\" status bytes);\n"
	"warnings go to standard error.\n"
	"\n"
	"Socket activation (systemd's LISTEN_PID and LISTEN_FDS): the listening\n"
	"sockets given are served instead of --bind and PORT.\n"
	"\n"
	"SIGHUP: reopen the log, read --auth-file again (what fails keeps the old).\n"
	"SIGUSR1: reopen the log. SIGINT or SIGTERM: stop accepting, finish the\n"
	"requests in progress, close idle connections, exit 0.\n"
	"Example: safe-httpd /srv/www 8080 & curl http://127.0.0.1:8080/index.html\n";

/* ------------------------------------------------------------------ options */

static void usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "safe-httpd: %s%s%s\nTry 'safe-httpd --help' for more information.\n",
		msg, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static unsigned long long parse_number(const char *s, unsigned long long max, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || !*s || *end || *s == '-' || v > max)
		usage_error(what, s);
	return v;
}

static int parse_seconds(const char *s)
{
	int v = (int)parse_number(s, 3600, "invalid timeout");
	if (!v)
		usage_error("invalid timeout", s);
	return v * 1000;
}

/* Each connection may hold its socket and one file; raise the soft limit
 * on descriptors to that, or lower --max-conns to what the hard limit
 * allows. */
static void fit_descriptor_limit(int nloops)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)cfg.max_conns * 2 + (rlim_t)nloops * (REJECT_MAX + 2) + 32;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0 && getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < need) {
		rlim_t fixed = (rlim_t)nloops * (REJECT_MAX + 2) + 32;
		unsigned max = rl.rlim_cur > fixed + 2 ? (unsigned)((rl.rlim_cur - fixed) / 2) : 1;
		fprintf(stderr, "safe-httpd: descriptor limit %llu: --max-conns lowered to %u\n",
			(unsigned long long)rl.rlim_cur, max);
		cfg.max_conns = max;
	}
}

static void parse_bind(const char *s, struct startup *st)
{
	memset(&st->addr, 0, sizeof(st->addr));
	if (inet_pton(AF_INET, s, &st->addr.in.sin_addr) == 1) {
		st->addr.in.sin_family = AF_INET;
		st->addr_len = sizeof(st->addr.in);
	} else if (inet_pton(AF_INET6, s, &st->addr.in6.sin6_addr) == 1) {
		st->addr.in6.sin6_family = AF_INET6;
		st->addr_len = sizeof(st->addr.in6);
	} else {
		usage_error("invalid address (an IPv4 or IPv6 literal)", s);
	}
}

static bool addr_loopback(const union sockaddr_any *sa)
{
	if (sa->sa.sa_family == AF_INET)
		return (ntohl(sa->in.sin_addr.s_addr) >> 24) == 127;
	const struct in6_addr *a = &sa->in6.sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a) ||
	       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* Whether every address the server listens on is loopback. */
static bool is_loopback(const struct startup *st)
{
	if (!st->nact)
		return addr_loopback(&st->addr);
	for (int i = 0; i < st->nact; i++)
		if (!addr_loopback(&st->act_addr[i]))
			return false;
	return true;
}

/*
 * Socket activation, systemd's protocol (sd_listen_fds(3)), read directly:
 * when LISTEN_PID names this process, LISTEN_FDS sockets start at
 * descriptor 3. Each must be a listening TCP socket (SOCK_STREAM, IPv4 or
 * IPv6) and becomes non-blocking, close-on-exec and TCP_NODELAY; anything
 * else stops the server (exit 1), never serving half of what it was given.
 * The variables are removed from the environment either way. --bind and
 * PORT then do not apply. Returns the number of sockets (0: not activated).
 */
static int activated_sockets(struct startup *st)
{
	const char *pid_s = getenv("LISTEN_PID"), *fds_s = getenv("LISTEN_FDS");
	int n = 0;
	if (!pid_s || !fds_s)
		goto out;
	char *end;
	errno = 0;
	unsigned long pid = strtoul(pid_s, &end, 10);
	if (errno || *end || pid != (unsigned long)getpid())
		goto out; /* meant for another process */
	errno = 0;
	unsigned long count = strtoul(fds_s, &end, 10);
	if (errno || *end || !*fds_s || count < 1 || count > ACT_MAX) {
		fprintf(stderr, "safe-httpd: LISTEN_FDS=%s: expected 1 to %d sockets from systemd\n",
			fds_s, ACT_MAX);
		exit(1);
	}
	int one = 1;
	for (n = 0; n < (int)count; n++) {
		int fd = 3 + n, type = 0, acc = 0, fl;
		socklen_t tl = sizeof(type), al = sizeof(acc), sl = sizeof(st->act_addr[n]);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
		    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) < 0 || !acc ||
		    getsockname(fd, &st->act_addr[n].sa, &sl) < 0 ||
		    (st->act_addr[n].sa.sa_family != AF_INET &&
		     st->act_addr[n].sa.sa_family != AF_INET6)) {
			fprintf(stderr, "safe-httpd: LISTEN_FDS: descriptor %d is not a listening "
					"TCP socket (IPv4 or IPv6)\n", fd);
			exit(1);
		}
		if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || (fl = fcntl(fd, F_GETFL)) < 0 ||
		    fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
		    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0) {
			fprintf(stderr, "safe-httpd: LISTEN_FDS: descriptor %d: %s\n", fd,
				strerror(errno));
			exit(1);
		}
		st->act_fd[n] = fd;
	}
out:
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return n;
}

enum {
	OPT_IN_ROOT = 256,
	OPT_WALKER,
	OPT_READ_ONLY,
	OPT_NO_LISTING,
	OPT_DOTFILES,
	OPT_MIME_TYPES,
	OPT_MAX_CONNS,
	OPT_HEAD_TIMEOUT,
	OPT_IDLE_TIMEOUT,
	OPT_BODY_TIMEOUT,
	OPT_TIMEOUT,
	OPT_MAX_BODY,
	OPT_THREADS,
	OPT_LOG_FORMAT,
	OPT_SYMLINKS,
};

/* --user: the ids USER[:GROUP] names (names or numbers); exits on a usage
 * error. */
static void parse_user(const char *spec, struct startup *st)
{
	char name[256];
	const char *colon = strchr(spec, ':');
	size_t ulen = colon ? (size_t)(colon - spec) : strlen(spec);
	if (!ulen || ulen >= sizeof(name) || (colon && !colon[1]))
		usage_error("invalid --user (USER or USER:GROUP)", spec);
	memcpy(name, spec, ulen);
	name[ulen] = '\0';
	char *end;
	const struct passwd *pw = getpwnam(name);
	if (pw) {
		st->run_uid = pw->pw_uid;
		st->run_gid = pw->pw_gid;
	} else {
		errno = 0;
		unsigned long id = strtoul(name, &end, 10);
		if (errno || *end || name[0] == '-' || id >= (uid_t)-1)
			usage_error("no such user", name);
		st->run_uid = (uid_t)id;
		st->run_gid = (gid_t)id;
	}
	if (colon) {
		const struct group *gr = getgrnam(colon + 1);
		if (gr) {
			st->run_gid = gr->gr_gid;
		} else {
			errno = 0;
			unsigned long id = strtoul(colon + 1, &end, 10);
			if (errno || *end || colon[1] == '-' || id >= (gid_t)-1)
				usage_error("no such group", colon + 1);
			st->run_gid = (gid_t)id;
		}
	}
	if (st->run_uid == 0 || st->run_gid == 0)
		usage_error("--user with uid or gid 0 drops nothing", spec);
	st->user = spec;
}

static const struct option long_opts[] = {
	{ "bind", required_argument, NULL, 'b' },
	{ "writable", no_argument, NULL, 'w' },
	{ "read-only", no_argument, NULL, OPT_READ_ONLY },
	{ "auth-file", required_argument, NULL, 'a' },
	{ "mkdirs", no_argument, NULL, 'D' },
	{ "dotfiles", no_argument, NULL, OPT_DOTFILES },
	{ "mime-types", required_argument, NULL, OPT_MIME_TYPES },
	{ "in-root", no_argument, NULL, OPT_IN_ROOT },
	{ "walker", no_argument, NULL, OPT_WALKER },
	{ "symlinks", required_argument, NULL, OPT_SYMLINKS },
	{ "no-listing", no_argument, NULL, OPT_NO_LISTING },
	{ "max-conns", required_argument, NULL, OPT_MAX_CONNS },
	{ "head-timeout", required_argument, NULL, OPT_HEAD_TIMEOUT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "body-timeout", required_argument, NULL, OPT_BODY_TIMEOUT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "max-body", required_argument, NULL, OPT_MAX_BODY },
	{ "log", required_argument, NULL, 'l' },
	{ "access-log", required_argument, NULL, 'l' },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "log-format", required_argument, NULL, OPT_LOG_FORMAT },
	{ "quiet", no_argument, NULL, 'q' },
	{ "user", required_argument, NULL, 'u' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

/* One option that sets a field of cfg; false if opt is not one of them. */
static bool config_option(int opt, const char *arg)
{
	switch (opt) {
	case 'w': cfg.writable = true; break;
	case OPT_READ_ONLY: cfg.writable = false; break;
	case 'D': cfg.mkdirs = true; break;
	case OPT_DOTFILES: cfg.dotfiles = true; break;
	case OPT_NO_LISTING: cfg.no_listing = true; break;
	case 'q': cfg.quiet = true; break;
	case OPT_IN_ROOT:
		cfg.resolve = (cfg.resolve & ~SAFE_RESOLVE_BENEATH) | SAFE_RESOLVE_IN_ROOT;
		break;
	case OPT_WALKER: cfg.resolve |= SAFE_RESOLVE_USERSPACE; break;
	case OPT_SYMLINKS: {
		/* Every request (GET, HEAD, PUT, DELETE, the listing's view of
		 * each link) is resolved with cfg.resolve: the policy is these
		 * two bits and nothing else. */
		const uint64_t bits = SAFE_RESOLVE_NO_SYMLINKS | SAFE_RESOLVE_SYMLINKS_OWNER_MATCH;
		cfg.resolve &= ~bits;
		if (!strcmp(arg, "owner-match"))
			cfg.resolve |= SAFE_RESOLVE_SYMLINKS_OWNER_MATCH;
		else if (!strcmp(arg, "none"))
			cfg.resolve |= SAFE_RESOLVE_NO_SYMLINKS;
		else if (strcmp(arg, "follow"))
			usage_error("invalid --symlinks (follow, owner-match or none)", arg);
		break;
	}
	case OPT_MAX_CONNS:
		cfg.max_conns = (unsigned)parse_number(arg, 1000000, "invalid count");
		if (!cfg.max_conns)
			usage_error("invalid count", arg);
		break;
	case OPT_HEAD_TIMEOUT: cfg.head_timeout_ms = parse_seconds(arg); break;
	case OPT_IDLE_TIMEOUT: cfg.idle_timeout_ms = parse_seconds(arg); break;
	case OPT_BODY_TIMEOUT: cfg.body_timeout_ms = parse_seconds(arg); break;
	case OPT_TIMEOUT:
		cfg.head_timeout_ms = cfg.idle_timeout_ms = cfg.body_timeout_ms =
			parse_seconds(arg);
		break;
	case OPT_MAX_BODY: cfg.max_body = parse_number(arg, ULLONG_MAX >> 1, "invalid size"); break;
	case OPT_LOG_FORMAT:
		if (!strcmp(arg, "common"))
			cfg.log_format = LOG_COMMON;
		else if (!strcmp(arg, "combined"))
			cfg.log_format = LOG_COMBINED;
		else if (!strcmp(arg, "timed"))
			cfg.log_format = LOG_TIMED;
		else
			usage_error("invalid --log-format (common, combined or timed)", arg);
		break;
	default: return false;
	}
	return true;
}

/* Options and arguments into cfg and *st; returns the port. Exits on
 * --help, --version and usage errors (status 2). */
static unsigned parse_options(int argc, char **argv, struct startup *st)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	st->nloops = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
	st->mime_path = "/etc/mime.types";
	st->run_uid = geteuid();
	st->run_gid = getegid();
	parse_bind("127.0.0.1", st);
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+b:wa:Dl:qu:hV", long_opts, NULL)) != -1) {
		if (config_option(c, optarg))
			continue;
		switch (c) {
		case 'b': parse_bind(optarg, st); break;
		case 'a': st->auth_path = optarg; break;
		case 'l': st->log_path = optarg; break;
		case 'u': parse_user(optarg, st); break;
		case OPT_MIME_TYPES:
			st->mime_path = optarg;
			st->mime_required = true;
			break;
		case OPT_THREADS:
			st->nloops = (int)parse_number(optarg, 64, "invalid thread count");
			if (!st->nloops)
				usage_error("invalid thread count", optarg);
			break;
		case 'h': fputs(usage_text, stdout); exit(0);
		case 'V': printf("safe-httpd (libsafeopen) %s\n", safe_version()); exit(0);
		default:
			usage_error(optopt ? "invalid option or missing argument" : "invalid option",
				    argv[optind - 1]);
		}
	}
	if (optind >= argc)
		usage_error("missing ROOT", NULL);
	if (argc - optind > 2)
		usage_error("too many arguments", argv[optind + 2]);
	st->root = argv[optind];
	st->nact = activated_sockets(st);
	if (st->nact > st->nloops)
		st->nloops = st->nact; /* a loop for each socket at least */
	if (cfg.writable && !st->auth_path && !is_loopback(st))
		usage_error("--writable on an address other than loopback needs --auth-file", NULL);
	return optind + 1 < argc ? (unsigned)parse_number(argv[optind + 1], 65535, "invalid port") :
				   8080;
}

/* ------------------------------------------------------------------ startup */

/* ROOT, the access log, the credentials and the MIME table: 0, or -1 after
 * a message. */
static int open_resources(const struct startup *st)
{
	/* ROOT is trusted: opened normally. Everything below it is not. */
	rootfd = open(st->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "safe-httpd: %s: %s\n", st->root, strerror(errno));
		return -1;
	}
	if (!cfg.quiet) {
		access_log = stderr;
		if (st->log_path && !(access_log = fopen(st->log_path, "ae"))) {
			fprintf(stderr, "safe-httpd: %s: %s\n", st->log_path, strerror(errno));
			return -1;
		}
	}
	if (st->auth_path && auth_load(st->auth_path, st->run_uid) < 0)
		return -1;
	if (mime_load(st->mime_path) < 0 && (st->mime_required || errno != ENOENT)) {
		fprintf(stderr, "safe-httpd: %s: %s\n", st->mime_path, strerror(errno));
		return -1;
	}
	if (auth_configured() && !is_loopback(st))
		fprintf(stderr, "safe-httpd: warning: --auth-file on an address other than "
				"loopback: Basic passwords and tokens cross the network in clear "
				"text; put a TLS proxy in front (safe-httpd(1), TLS)\n");
	if (cfg.writable && !auth_configured())
		fprintf(stderr, "safe-httpd: warning: --writable without --auth-file: "
				"every local user can write to %s\n", st->root);
	/* the multipart/byteranges boundary: random, so a file cannot hold it
	 * by accident */
	unsigned char r[8];
	if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		uint64_t t = (uint64_t)now_ms() ^ ((uint64_t)getpid() << 32);
		memcpy(r, &t, sizeof(r));
	}
	for (size_t i = 0; i < sizeof(r); i++)
		snprintf(boundary + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/*
 * --user: become st->run_uid and st->run_gid with no other group, once
 * everything that needs the starting user's rights (the sockets, ROOT, the
 * log, the credentials) is open, and before any thread starts. Each step
 * is checked, and so is the result: every id is the new one, and the
 * old user cannot be taken back. 0, or -1 after a message (the caller
 * exits: a server asked to drop root never serves as root).
 */
static int drop_privileges(const struct startup *st)
{
	if (!st->user) {
		if (geteuid() == 0)
			fprintf(stderr, "safe-httpd: warning: serving as root; --user USER drops "
					"to USER once the sockets are bound\n");
		return 0;
	}
	if (geteuid() != 0 && getuid() == st->run_uid && getgid() == st->run_gid)
		return 0; /* already that user: nothing to drop */
	const char *step = "setgroups";
	if (setgroups(1, &st->run_gid) < 0 ||
	    (step = "setgid", setgid(st->run_gid) < 0) ||
	    (step = "setuid", setuid(st->run_uid) < 0))
		goto fail;
	step = "checking the new ids";
	gid_t groups[2];
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0)
		goto fail;
	int ng = getgroups(2, groups);
	if (ru != st->run_uid || eu != st->run_uid || su != st->run_uid || rg != st->run_gid ||
	    eg != st->run_gid || sg != st->run_gid || ng != 1 || groups[0] != st->run_gid ||
	    setuid(0) == 0) {
		errno = EPERM;
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "safe-httpd: --user %s: %s: %s\n", st->user, step, strerror(errno));
	return -1;
}

/* The address as "listening on" prints it. */
static void format_addr(const union sockaddr_any *sa, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];
	if (sa->sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &sa->in.sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(sa->in.sin_port));
	} else {
		inet_ntop(AF_INET6, &sa->in6.sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(sa->in6.sin6_port));
	}
}

/* One listening socket per loop on the same port (SO_REUSEPORT: the kernel
 * spreads new connections over them, and each loop accepts its own); port
 * 0 is resolved by the first. TCP_NODELAY is set here and inherited by
 * every accepted socket. NULL after a message. */
static int *open_listeners(struct startup *st, unsigned port)
{
	int *lfds = calloc((size_t)st->nloops, sizeof(*lfds));
	if (!lfds)
		return NULL;
	if (st->nact) {
		/* Sockets from systemd: loop i takes socket i % nact, each loop
		 * its own descriptor of it (a loop closes its own when it stops);
		 * loops sharing a socket each accept from it. */
		for (int i = 0; i < st->nloops; i++) {
			int fd = st->act_fd[i % st->nact];
			lfds[i] = i < st->nact ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3);
			if (lfds[i] < 0) {
				perror("safe-httpd: LISTEN_FDS");
				free(lfds);
				return NULL;
			}
		}
		return lfds;
	}
	if (st->addr.sa.sa_family == AF_INET)
		st->addr.in.sin_port = htons((uint16_t)port);
	else
		st->addr.in6.sin6_port = htons((uint16_t)port);
	int one = 1;
	for (int i = 0; i < st->nloops; i++) {
		socklen_t alen = st->addr_len;
		lfds[i] = socket(st->addr.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (lfds[i] < 0 ||
		    setsockopt(lfds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
		    (st->nloops > 1 &&
		     setsockopt(lfds[i], SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) ||
		    setsockopt(lfds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
		    bind(lfds[i], &st->addr.sa, st->addr_len) < 0 ||
		    listen(lfds[i], SOMAXCONN) < 0 ||
		    getsockname(lfds[i], &st->addr.sa, &alen) < 0) {
			char a[INET6_ADDRSTRLEN + 16];
			int err = errno;
			format_addr(&st->addr, a, sizeof(a));
			fprintf(stderr, "safe-httpd: %s: %s\n", a, strerror(err));
			free(lfds);
			return NULL;
		}
	}
	return lfds;
}

/* SIGHUP: the access log reopened and the credentials read again;
 * SIGUSR1: the log only. Requests in progress go on, with the old
 * credentials if they were read before. What fails is said, and the old
 * file or credentials stay in use. */
static void reload(const struct startup *st, int sig)
{
	const char *what = sig == SIGHUP ? "SIGHUP" : "SIGUSR1";
	if (access_log && st->log_path) {
		if (log_reopen(st->log_path) < 0)
			fprintf(stderr, "safe-httpd: %s: --log %s: %s: the log goes on in the old "
					"file\n", what, st->log_path, strerror(errno));
		else
			fprintf(stderr, "safe-httpd: %s: %s reopened\n", what, st->log_path);
	}
	if (sig == SIGHUP && st->auth_path) {
		if (auth_load(st->auth_path, st->run_uid) < 0)
			fprintf(stderr, "safe-httpd: SIGHUP: --auth-file %s not re-read: the "
					"credentials read before stay in force\n", st->auth_path);
		else
			fprintf(stderr, "safe-httpd: SIGHUP: --auth-file %s re-read\n",
				st->auth_path);
	}
}

/* Serve signals until SIGINT or SIGTERM (or a failing signalfd), which is
 * returned. */
static int wait_for_stop(int sfd, const struct startup *st)
{
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			return SIGTERM;
		}
		int sig = (int)si.ssi_signo;
		if (sig != SIGHUP && sig != SIGUSR1)
			return sig;
		reload(st, sig);
	}
}

int main(int argc, char **argv)
{
	struct startup st = { 0 };
	unsigned port = parse_options(argc, argv, &st);
	if (open_resources(&st) < 0)
		return 1;
	fit_descriptor_limit(st.nloops);

	/* SIGPIPE ignored (a client may vanish during sendfile); SIGINT,
	 * SIGTERM, SIGHUP and SIGUSR1 blocked in every thread and read from a
	 * signalfd here (wait_for_stop()). */
	signal(SIGPIPE, SIG_IGN);
	sigset_t stop_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGHUP);
	sigaddset(&stop_set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	int sfd = signalfd(-1, &stop_set, SFD_CLOEXEC);
	wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	pthread_t *threads = calloc((size_t)st.nloops, sizeof(*threads));
	if (sfd < 0 || wakefd < 0 || !threads) {
		fprintf(stderr, "safe-httpd: %s\n", strerror(errno));
		return 1;
	}
	int *lfds = open_listeners(&st, port);
	if (!lfds) {
		free(threads);
		return 1;
	}
	if (drop_privileges(&st) < 0)
		return 1;
	int started = 0;
	for (; started < st.nloops; started++)
		if (pthread_create(&threads[started], NULL, loop_main,
				   (void *)(intptr_t)lfds[started]) != 0)
			break;
	if (started < st.nloops) { /* their sockets would take connections nobody accepts */
		fprintf(stderr, "safe-httpd: cannot start %d loop threads\n", st.nloops);
		return 1;
	}
	free(lfds);
	char a[INET6_ADDRSTRLEN + 16];
	for (int i = 0; i < (st.nact ? st.nact : 1); i++) {
		format_addr(st.nact ? &st.act_addr[i] : &st.addr, a, sizeof(a));
		printf("listening on %s\n", a);
	}
	fflush(stdout);

	int sig = wait_for_stop(sfd, &st);
	fprintf(stderr, "safe-httpd: %s, shutting down\n", strsignal(sig));
	atomic_store(&stopping, true);
	uint64_t wake = 1;
	if (write(wakefd, &wake, sizeof(wake)) != (ssize_t)sizeof(wake))
		perror("safe-httpd: eventfd");
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	close(wakefd);
	close(sfd);
	close(rootfd);
	if (access_log && access_log != stderr)
		fclose(access_log);
	return 0;
}
