/* SPDX-License-Identifier: MIT */
/*
 * safe-httpd: Content-Type by file name extension.
 *
 * The table comes from a mime.types file (default /etc/mime.types, Debian's
 * media-types package; "type ext1 ext2 ..." a line, '#' comments), read
 * once at startup before any loop thread runs and never written afterwards,
 * so lookups need no lock. An extension the file does not know (or every
 * extension, when there is no file) is looked up in the built-in table
 * below; what neither knows is application/octet-stream. Text types get
 * "; charset=utf-8" unless they carry a parameter already (the built-in
 * table has it written out).
 */
#define _GNU_SOURCE
#include "httpd.h"

#define EXT_MAX 32        /* longest extension kept (bytes, without the dot) */
#define TYPE_MAX 120      /* longest type kept, with the charset parameter */
#define MIME_SLOTS 4096   /* open-addressing table: at most 3/4 used */

struct mime_entry {
	char ext[EXT_MAX + 1];
	char *type;
};

static struct mime_entry *table; /* MIME_SLOTS entries, NULL when nothing was loaded */
static size_t used;

static const struct {
	const char *ext, *type;
} builtin[] = {
	{ "html", "text/html; charset=utf-8" },	  { "htm", "text/html; charset=utf-8" },
	{ "txt", "text/plain; charset=utf-8" },	  { "md", "text/markdown; charset=utf-8" },
	{ "css", "text/css; charset=utf-8" },		  { "csv", "text/csv; charset=utf-8" },
	{ "js", "text/javascript; charset=utf-8" },	  { "mjs", "text/javascript; charset=utf-8" },
	{ "json", "application/json" },	  { "map", "application/json" },
	{ "xml", "application/xml" },	  { "wasm", "application/wasm" },
	{ "pdf", "application/pdf" },	  { "gz", "application/gzip" },
	{ "tar", "application/x-tar" },	  { "zip", "application/zip" },
	{ "xz", "application/x-xz" },	  { "zst", "application/zstd" },
	{ "bz2", "application/x-bzip2" }, { "7z", "application/x-7z-compressed" },
	{ "png", "image/png" },		  { "jpg", "image/jpeg" },
	{ "jpeg", "image/jpeg" },	  { "gif", "image/gif" },
	{ "svg", "image/svg+xml" },	  { "webp", "image/webp" },
	{ "avif", "image/avif" },	  { "ico", "image/vnd.microsoft.icon" },
	{ "bmp", "image/bmp" },		  { "tif", "image/tiff" },
	{ "tiff", "image/tiff" },	  { "mp4", "video/mp4" },
	{ "m4v", "video/mp4" },		  { "webm", "video/webm" },
	{ "ogv", "video/ogg" },		  { "mov", "video/quicktime" },
	{ "mp3", "audio/mpeg" },	  { "m4a", "audio/mp4" },
	{ "ogg", "audio/ogg" },		  { "oga", "audio/ogg" },
	{ "opus", "audio/ogg" },	  { "wav", "audio/wav" },
	{ "flac", "audio/flac" },	  { "woff", "font/woff" },
	{ "woff2", "font/woff2" },	  { "ttf", "font/ttf" },
	{ "otf", "font/otf" },
};

static size_t hash(const char *s)
{
	size_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* The slot holding ext, or the empty slot where it belongs. */
static struct mime_entry *slot(const char *ext)
{
	for (size_t i = hash(ext) % MIME_SLOTS;; i = (i + 1) % MIME_SLOTS)
		if (!table[i].type || !strcmp(table[i].ext, ext))
			return &table[i];
}

/* The type as served: with a charset for text/ types. NULL if unusable. */
static char *served_type(const char *type)
{
	char buf[TYPE_MAX + 1];
	bool text = !strncasecmp(type, "text/", 5) && !strchr(type, ';');
	int n = snprintf(buf, sizeof(buf), "%s%s", type, text ? "; charset=utf-8" : "");
	if (n < 0 || (size_t)n >= sizeof(buf) || !valid_mime(buf, (size_t)n))
		return NULL;
	return strdup(buf);
}

/* Copy the extension of name (after the last '.' of its last component),
 * lower-cased, into ext; false if there is none or it is too long. */
static bool extension(const char *name, char ext[EXT_MAX + 1])
{
	const char *slash = strrchr(name, '/');
	const char *dot = strrchr(slash ? slash + 1 : name, '.');
	if (!dot || !dot[1] || strlen(dot + 1) > EXT_MAX)
		return false;
	size_t i = 0;
	for (const char *s = dot + 1; *s; s++)
		ext[i++] = (char)tolower((unsigned char)*s);
	ext[i] = '\0';
	return true;
}

/* Read a mime.types file. 0, or -1 with errno when it cannot be opened (a
 * malformed line is skipped; the first type given for an extension wins, as
 * the file's readers usually do). */
int mime_load(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	if (!table && !(table = calloc(MIME_SLOTS, sizeof(*table)))) {
		fclose(f);
		errno = ENOMEM;
		return -1;
	}
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *type = strtok_r(line, " \t\r\n", &save);
		if (!type || type[0] == '#' || !strchr(type, '/'))
			continue;
		char *served = NULL;
		bool kept = false;
		for (char *e; (e = strtok_r(NULL, " \t\r\n", &save));) {
			char ext[EXT_MAX + 1];
			char dotted[EXT_MAX + 3];
			snprintf(dotted, sizeof(dotted), ".%.*s", EXT_MAX + 1, e);
			if (e[0] == '#')
				break;
			if (!extension(dotted, ext) || used >= MIME_SLOTS * 3 / 4)
				continue;
			struct mime_entry *s = slot(ext);
			if (s->type)
				continue;
			if (!served && !(served = served_type(type)))
				break;
			memcpy(s->ext, ext, sizeof(s->ext));
			s->type = served;
			kept = true;
			used++;
		}
		if (!kept)
			free(served);
	}
	fclose(f);
	return 0;
}

const char *mime_type(const char *name)
{
	char ext[EXT_MAX + 1];
	if (!extension(name, ext))
		return "application/octet-stream";
	if (table) {
		const struct mime_entry *s = slot(ext);
		if (s->type)
			return s->type;
	}
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (!strcmp(ext, builtin[i].ext))
			return builtin[i].type;
	return "application/octet-stream";
}
