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
