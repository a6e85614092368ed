/* mime.c — see mime.h.  The table is sorted by extension (bytewise, lower case)
 * for a binary search; http_mime_check() holds it to that. */
#include "mime.h"

struct mime { const char *ext, *type; };

static const struct mime table[] = {
	{"7z", "application/x-7z-compressed"},
	{"aac", "audio/aac"},
	{"ai", "application/postscript"},
	{"apng", "image/apng"},
	{"asf", "video/x-ms-asf"},
	{"asx", "video/x-ms-asf"},
	{"atom", "application/atom+xml"},
	{"avi", "video/x-msvideo"},
	{"avif", "image/avif"},
	{"bin", "application/octet-stream"},
	{"bmp", "image/bmp"},
	{"br", "application/x-brotli"},
	{"bz2", "application/x-bzip2"},
	{"cco", "application/x-cocoa"},
	{"crt", "application/x-x509-ca-cert"},
	{"css", "text/css; charset=utf-8"},
	{"csv", "text/csv; charset=utf-8"},
	{"deb", "application/octet-stream"},
	{"der", "application/x-x509-ca-cert"},
	{"dll", "application/octet-stream"},
	{"dmg", "application/octet-stream"},
	{"doc", "application/msword"},
	{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
	{"ear", "application/java-archive"},
	{"eot", "application/vnd.ms-fontobject"},
	{"eps", "application/postscript"},
	{"epub", "application/epub+zip"},
	{"exe", "application/octet-stream"},
	{"flac", "audio/flac"},
	{"flv", "video/x-flv"},
	{"gif", "image/gif"},
	{"gz", "application/gzip"},
	{"hqx", "application/mac-binhex40"},
	{"htc", "text/x-component"},
	{"htm", "text/html; charset=utf-8"},
	{"html", "text/html; charset=utf-8"},
	{"ico", "image/x-icon"},
	{"ics", "text/calendar; charset=utf-8"},
	{"img", "application/octet-stream"},
	{"iso", "application/octet-stream"},
	{"jad", "text/vnd.sun.j2me.app-descriptor"},
	{"jar", "application/java-archive"},
	{"jardiff", "application/x-java-archive-diff"},
	{"jng", "image/x-jng"},
	{"jnlp", "application/x-java-jnlp-file"},
	{"jpeg", "image/jpeg"},
	{"jpg", "image/jpeg"},
	{"js", "text/javascript; charset=utf-8"},
	{"json", "application/json"},
	{"jsonld", "application/ld+json"},
	{"jxl", "image/jxl"},
	{"kar", "audio/midi"},
	{"kml", "application/vnd.google-earth.kml+xml"},
	{"kmz", "application/vnd.google-earth.kmz"},
	{"m3u8", "application/vnd.apple.mpegurl"},
	{"m4a", "audio/x-m4a"},
	{"m4v", "video/x-m4v"},
	{"map", "application/json"},
	{"md", "text/markdown; charset=utf-8"},
	{"mid", "audio/midi"},
	{"midi", "audio/midi"},
	{"mjs", "text/javascript; charset=utf-8"},
	{"mml", "text/mathml"},
	{"mng", "video/x-mng"},
	{"mov", "video/quicktime"},
	{"mp3", "audio/mpeg"},
	{"mp4", "video/mp4"},
	{"mpeg", "video/mpeg"},
	{"mpg", "video/mpeg"},
	{"msi", "application/octet-stream"},
	{"msm", "application/octet-stream"},
	{"msp", "application/octet-stream"},
	{"odg", "application/vnd.oasis.opendocument.graphics"},
	{"odp", "application/vnd.oasis.opendocument.presentation"},
	{"ods", "application/vnd.oasis.opendocument.spreadsheet"},
	{"odt", "application/vnd.oasis.opendocument.text"},
	{"oga", "audio/ogg"},
	{"ogg", "audio/ogg"},
	{"ogv", "video/ogg"},
	{"opus", "audio/ogg"},
	{"otf", "font/otf"},
	{"pdb", "application/x-pilot"},
	{"pdf", "application/pdf"},
	{"pem", "application/x-x509-ca-cert"},
	{"pl", "application/x-perl"},
	{"pm", "application/x-perl"},
	{"png", "image/png"},
	{"ppt", "application/vnd.ms-powerpoint"},
	{"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
	{"prc", "application/x-pilot"},
	{"ps", "application/postscript"},
	{"ra", "audio/x-realaudio"},
	{"rar", "application/x-rar-compressed"},
	{"rpm", "application/x-redhat-package-manager"},
	{"rss", "application/rss+xml"},
	{"rtf", "application/rtf"},
	{"run", "application/x-makeself"},
	{"sea", "application/x-sea"},
	{"shtml", "text/html; charset=utf-8"},
	{"sit", "application/x-stuffit"},
	{"svg", "image/svg+xml"},
	{"svgz", "image/svg+xml"},
	{"swf", "application/x-shockwave-flash"},
	{"tar", "application/x-tar"},
	{"tcl", "application/x-tcl"},
	{"tif", "image/tiff"},
	{"tiff", "image/tiff"},
	{"tk", "application/x-tcl"},
	{"ts", "video/mp2t"},
	{"ttf", "font/ttf"},
	{"txt", "text/plain; charset=utf-8"},
	{"vtt", "text/vtt; charset=utf-8"},
	{"war", "application/java-archive"},
	{"wasm", "application/wasm"},
	{"wav", "audio/wav"},
	{"wbmp", "image/vnd.wap.wbmp"},
	{"weba", "audio/webm"},
	{"webm", "video/webm"},
	{"webmanifest", "application/manifest+json"},
	{"webp", "image/webp"},
	{"wml", "text/vnd.wap.wml"},
	{"wmlc", "application/vnd.wap.wmlc"},
	{"wmv", "video/x-ms-wmv"},
	{"woff", "font/woff"},
	{"woff2", "font/woff2"},
	{"xhtml", "application/xhtml+xml"},
	{"xls", "application/vnd.ms-excel"},
	{"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
	{"xml", "text/xml"},
	{"xpi", "application/x-xpinstall"},
	{"xspf", "application/xspf+xml"},
	{"xz", "application/x-xz"},
	{"yaml", "application/yaml"},
	{"yml", "application/yaml"},
	{"zip", "application/zip"},
	{"zst", "application/zstd"},
};
#define NTYPES (sizeof(table) / sizeof(table[0]))

/* Compare ext[0, n) lowered with a lower-case table key. */
static int cmp(const char *ext, size_t n, const char *key)
{
	for (size_t i = 0;; i++) {
		int a = i < n ? (unsigned char)ext[i] : 0, b = (unsigned char)key[i];
		if (a >= 'A' && a <= 'Z')
			a |= 0x20;
		if (a != b || !b)
			return a - b;
	}
}

const char *http_mime_type(const char *name, size_t n)
{
	size_t dot = n;
	for (size_t i = n; i > 0; i--) {
		if (name[i - 1] == '/')
			break;
		if (name[i - 1] == '.') {
			dot = i - 1;
			break;
		}
	}
	/* No dot, or it begins the name: no extension. */
	if (dot == n || dot == 0 || name[dot - 1] == '/')
		return HTTP_MIME_DEFAULT;
	const char *ext = name + dot + 1;
	size_t elen = n - dot - 1;
	if (elen == 0 || elen > 16)
		return HTTP_MIME_DEFAULT;
	size_t lo = 0, hi = NTYPES;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(ext, elen, table[mid].ext);
		if (c == 0)
			return table[mid].type;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return HTTP_MIME_DEFAULT;
}

int http_mime_check(void)
{
	for (size_t i = 1; i < NTYPES; i++) {
		size_t n = 0;
		while (table[i].ext[n])
			n++;
		if (cmp(table[i].ext, n, table[i - 1].ext) <= 0)
			return -(int)i - 1;
	}
	return (int)NTYPES;
}
