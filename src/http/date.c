/* date.c — see date.h.
 *
 * Calendar arithmetic on a year that starts on 1 March: the leap day is
 * then the last day of the year, so the month lengths repeat in a fixed
 * 5-month pattern (31 30 31 30 31) that (153 * m + 2) / 5 reproduces, and
 * the Gregorian 400-year cycle (146097 days) makes everything else plain
 * division.  Day 0 of this count is 0000-03-01; the epoch is day 719468. */
#include "date.h"

#define DAYS_PER_ERA 146097u       /* 400 Gregorian years */
#define EPOCH_FROM_0000_03_01 719468u
#define MAX_UNIX_SEC 253402300799ull /* 9999-12-31 23:59:59 */

static void put2(char *p, unsigned v)
{
	p[0] = (char)('0' + v / 10 % 10);
	p[1] = (char)('0' + v % 10);
}

void http_date_format(uint64_t t, char out[HTTP_DATE_LEN])
{
	static const char wdays[7][3] = {{'T', 'h', 'u'}, {'F', 'r', 'i'}, {'S', 'a', 't'},
					 {'S', 'u', 'n'}, {'M', 'o', 'n'}, {'T', 'u', 'e'},
					 {'W', 'e', 'd'}}; /* 1970-01-01 was a Thursday */
	static const char months[12][3] = {{'J', 'a', 'n'}, {'F', 'e', 'b'}, {'M', 'a', 'r'},
					   {'A', 'p', 'r'}, {'M', 'a', 'y'}, {'J', 'u', 'n'},
					   {'J', 'u', 'l'}, {'A', 'u', 'g'}, {'S', 'e', 'p'},
					   {'O', 'c', 't'}, {'N', 'o', 'v'}, {'D', 'e', 'c'}};
	if (t > MAX_UNIX_SEC)
		t = MAX_UNIX_SEC;
	uint64_t days = t / 86400;
	unsigned secs = (unsigned)(t % 86400);

	uint64_t z = days + EPOCH_FROM_0000_03_01;
	uint64_t era = z / DAYS_PER_ERA;
	unsigned doe = (unsigned)(z - era * DAYS_PER_ERA); /* day of era, 0..146096 */
	/* Year of era: take out one day per 4 years, add one back per 100,
	 * take one out at the end of the 400 (day 146096 is year 399). */
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / (DAYS_PER_ERA - 1)) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* 0 = 1 March */
	unsigned mp = (5 * doy + 2) / 153;                       /* 0 = March */
	unsigned mday = doy - (153 * mp + 2) / 5 + 1;
	unsigned month = mp < 10 ? mp + 3 : mp - 9; /* 1..12 */
	unsigned year = (unsigned)(era * 400 + yoe) + (month <= 2);

	const char *wd = wdays[days % 7], *mn = months[month - 1];
	out[0] = wd[0], out[1] = wd[1], out[2] = wd[2];
	out[3] = ',', out[4] = ' ';
	put2(out + 5, mday);
	out[7] = ' ';
	out[8] = mn[0], out[9] = mn[1], out[10] = mn[2];
	out[11] = ' ';
	put2(out + 12, year / 100);
	put2(out + 14, year % 100);
	out[16] = ' ';
	put2(out + 17, secs / 3600);
	out[19] = ':';
	put2(out + 20, secs / 60 % 60);
	out[22] = ':';
	put2(out + 23, secs % 60);
	out[25] = ' ', out[26] = 'G', out[27] = 'M', out[28] = 'T';
}

uint64_t http_date_from_civil(unsigned year, unsigned month, unsigned day, unsigned hour,
			      unsigned min, unsigned sec)
{
	/* January and February belong to the previous March-based year. */
	unsigned y = year - (month <= 2);
	unsigned era = y / 400, yoe = y % 400;
	unsigned mp = month > 2 ? month - 3 : month + 9;
	unsigned doy = (153 * mp + 2) / 5 + day - 1;
	uint64_t doe = (uint64_t)yoe * 365 + yoe / 4 - yoe / 100 + doy;
	uint64_t days = (uint64_t)era * DAYS_PER_ERA + doe - EPOCH_FROM_0000_03_01;
	return days * 86400 + (uint64_t)hour * 3600 + (uint64_t)min * 60 + sec;
}

/* ---- parsing ---- */

struct cur {
	const uint8_t *p, *end;
};

static bool lit(struct cur *c, const char *s)
{
	for (; *s; s++, c->p++)
		if (c->p == c->end || *c->p != (uint8_t)*s)
			return false;
	return true;
}

/* Exactly `digits` digits (asctime's day: a leading SP stands for a 0). */
static bool num(struct cur *c, unsigned digits, unsigned *out)
{
	unsigned v = 0;
	for (unsigned i = 0; i < digits; i++, c->p++) {
		if (c->p == c->end || *c->p < '0' || *c->p > '9')
			return false;
		v = v * 10 + (unsigned)(*c->p - '0');
	}
	*out = v;
	return true;
}

static bool month(struct cur *c, unsigned *m)
{
	static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	if (c->end - c->p < 3)
		return false;
	for (unsigned i = 0; i < 12; i++)
		if (c->p[0] == names[3 * i] && c->p[1] == names[3 * i + 1] &&
		    c->p[2] == names[3 * i + 2]) {
			*m = i + 1;
			c->p += 3;
			return true;
		}
	return false;
}

/* A weekday: "Mon" .. "Sun", or the long name for rfc850 (long). */
static bool weekday(struct cur *c, bool is_long)
{
	static const char *const full[7] = {"Monday", "Tuesday", "Wednesday", "Thursday",
					    "Friday", "Saturday", "Sunday"};
	for (unsigned i = 0; i < 7; i++) {
		struct cur t = *c;
		const char *w = full[i];
		if (is_long ? lit(&t, w) : (t.end - t.p >= 3 && t.p[0] == (uint8_t)w[0] &&
					    t.p[1] == (uint8_t)w[1] && t.p[2] == (uint8_t)w[2])) {
			if (!is_long)
				t.p += 3;
			*c = t;
			return true;
		}
	}
	return false;
}

static bool hms(struct cur *c, unsigned *h, unsigned *m, unsigned *s)
{
	return num(c, 2, h) && lit(c, ":") && num(c, 2, m) && lit(c, ":") && num(c, 2, s);
}

static bool civil_ok(unsigned y, unsigned mo, unsigned d, unsigned h, unsigned mi, unsigned s)
{
	static const uint8_t mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1])
		return false;
	if (mo == 2 && d == 29 && !(y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)))
		return false;
	return h < 24 && mi < 60 && s <= 60;
}

bool http_date_parse(const uint8_t *s, size_t n, uint64_t *unix_sec)
{
	struct cur c = {s, s + n};
	while (c.p < c.end && (*c.p == ' ' || *c.p == '\t'))
		c.p++;
	while (c.end > c.p && (c.end[-1] == ' ' || c.end[-1] == '\t'))
		c.end--;
	unsigned y, mo, d, h, mi, sec;
	struct cur t = c;
	if (weekday(&t, false) && lit(&t, ", ")) {
		/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
		if (!(num(&t, 2, &d) && lit(&t, " ") && month(&t, &mo) && lit(&t, " ") &&
		      num(&t, 4, &y) && lit(&t, " ") && hms(&t, &h, &mi, &sec) && lit(&t, " GMT")))
			return false;
	} else if (t = c, weekday(&t, true) && lit(&t, ", ")) {
		/* rfc850-date: "Sunday, 06-Nov-94 08:49:37 GMT" */
		if (!(num(&t, 2, &d) && lit(&t, "-") && month(&t, &mo) && lit(&t, "-") &&
		      num(&t, 2, &y) && lit(&t, " ") && hms(&t, &h, &mi, &sec) && lit(&t, " GMT")))
			return false;
		y += y < 70 ? 2000 : 1900;
	} else if (t = c, weekday(&t, false) && lit(&t, " ")) {
		/* asctime-date: "Sun Nov  6 08:49:37 1994" (day: SP DIGIT or 2DIGIT) */
		if (!(month(&t, &mo) && lit(&t, " ")))
			return false;
		if (t.p < t.end && *t.p == ' ') {
			t.p++;
			if (!num(&t, 1, &d))
				return false;
		} else if (!num(&t, 2, &d)) {
			return false;
		}
		if (!(lit(&t, " ") && hms(&t, &h, &mi, &sec) && lit(&t, " ") && num(&t, 4, &y)))
			return false;
	} else {
		return false;
	}
	if (t.p != t.end || !civil_ok(y, mo, d, h, mi, sec))
		return false;
	*unix_sec = http_date_from_civil(y, mo, d, h, mi, sec);
	return true;
}
