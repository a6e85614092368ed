/* chunked.c — the chunked body decoder; the rules are in chunked.h.
 *
 * Framing bytes (size lines, CRLFs, trailers) go through a switch, one
 * byte at a time: they are a few bytes per chunk.  Data bytes are moved in
 * one memmove per run, which is where a body's bytes are.  Every check
 * depends only on the byte and the state, never on where the input was
 * cut, so any split of a body gives the same result as the whole.
 */
#include "chunked.h"

#define CLS http_char_class

enum ck_state {
	CK_SIZE0,    /* first HEXDIG of a chunk-size */
	CK_SIZE,     /* more HEXDIGs */
	CK_BWS,      /* whitespace after the size, before ';' */
	CK_EXT,      /* in a chunk extension, until CR */
	CK_SIZE_LF,  /* after the size line's CR */
	CK_DATA,     /* size bytes of data left */
	CK_DATA_CR,  /* after the data */
	CK_DATA_LF,
	CK_TR_START, /* start of a trailer line or of the final CRLF */
	CK_TR_NAME,
	CK_TR_VALUE, /* after ':' until CR */
	CK_TR_LF,
	CK_END_LF,   /* after the final CR */
};

void http_chunked_init(struct http_chunked *c, uint64_t max_body)
{
	sk_memset(c, 0, sizeof(*c));
	c->max_body = max_body;
}

static inline unsigned hexval(uint8_t ch)
{
	return ch <= '9' ? ch - '0' : (ch | 0x20) - 'a' + 10;
}

int http_chunked_decode(struct http_chunked *c, uint8_t *buf, size_t *len, size_t *used)
{
	size_t n = *len, i = 0, o = 0;
	int err = 0;

	if (c->err || c->done) {
		*len = 0;
		*used = 0;
		return c->err ? c->err : HTTP_DONE;
	}
	while (i < n) {
		uint8_t ch = buf[i];
		switch (c->state) {
		case CK_SIZE0:
			if (!(CLS[ch] & HTTP_C_HEX)) {
				err = HTTP_E_CHUNK_SIZE;
				goto fail;
			}
			c->size = hexval(ch);
			c->count = 1;
			c->state = CK_SIZE;
			goto check_size;
		case CK_SIZE:
			if (CLS[ch] & HTTP_C_HEX) {
				if (++c->count > 16) {
					err = HTTP_E_CHUNK_SIZE;
					goto fail;
				}
				c->size = c->size << 4 | hexval(ch);
				goto check_size;
			}
			if (ch == '\r')
				c->state = CK_SIZE_LF;
			else if (ch == ';')
				c->state = CK_EXT, c->count = 0;
			else if (CLS[ch] & HTTP_C_WS)
				c->state = CK_BWS;
			else {
				err = ch == '\n' ? HTTP_E_BARE_LF : HTTP_E_CHUNK_SIZE;
				goto fail;
			}
			i++;
			continue;
		check_size:
			/* Before the data: a client announcing too much is
			 * refused without reading it. */
			if (c->size > c->max_body - c->total) {
				err = HTTP_E_BODY_TOO_LARGE;
				goto fail;
			}
			i++;
			continue;
		case CK_BWS:
			if (ch == ';')
				c->state = CK_EXT, c->count = 0;
			else if (!(CLS[ch] & HTTP_C_WS)) {
				err = HTTP_E_CHUNK_EXT;
				goto fail;
			}
			i++;
			continue;
		case CK_EXT:
			if (ch == '\r')
				c->state = CK_SIZE_LF;
			else if (!(CLS[ch] & HTTP_C_VALUE) || ++c->count > HTTP_MAX_CHUNK_EXT) {
				err = ch == '\n' ? HTTP_E_BARE_LF : HTTP_E_CHUNK_EXT;
				goto fail;
			}
			i++;
			continue;
		case CK_SIZE_LF:
			if (ch != '\n') {
				err = HTTP_E_BARE_CR;
				goto fail;
			}
			c->state = c->size ? CK_DATA : CK_TR_START;
			i++;
			continue;
		case CK_DATA: {
			size_t k = n - i;
			if (k > c->size)
				k = (size_t)c->size;
			if (o != i)
				sk_memmove(buf + o, buf + i, k);
			o += k;
			i += k;
			c->size -= k;
			c->total += k;
			if (c->size == 0)
				c->state = CK_DATA_CR;
			continue;
		}
		case CK_DATA_CR:
		case CK_DATA_LF:
			if (ch != (c->state == CK_DATA_CR ? '\r' : '\n')) {
				err = HTTP_E_CHUNK_CRLF;
				goto fail;
			}
			c->state = c->state == CK_DATA_CR ? CK_DATA_LF : CK_SIZE0;
			i++;
			continue;
		case CK_TR_START:
			if (ch == '\r') {
				c->state = CK_END_LF;
				i++;
				continue;
			}
			if (c->tbytes >= HTTP_MAX_FIELDS_BYTES) {
				err = HTTP_E_TRAILER_TOO_LARGE;
				goto fail;
			}
			if (c->fields >= HTTP_MAX_FIELDS) {
				err = HTTP_E_TOO_MANY_FIELDS;
				goto fail;
			}
			if (CLS[ch] & HTTP_C_WS) {
				err = HTTP_E_FOLD;
				goto fail;
			}
			if (!(CLS[ch] & HTTP_C_TOKEN)) {
				err = ch == 0 ? HTTP_E_NUL : ch == '\n' ? HTTP_E_BARE_LF : HTTP_E_NAME;
				goto fail;
			}
			c->state = CK_TR_NAME;
			goto trailer_byte;
		case CK_TR_NAME:
			if (c->tbytes >= HTTP_MAX_FIELDS_BYTES) {
				err = HTTP_E_TRAILER_TOO_LARGE;
				goto fail;
			}
			if (ch == ':')
				c->state = CK_TR_VALUE;
			else if (!(CLS[ch] & HTTP_C_TOKEN)) {
				err = ch == 0 ? HTTP_E_NUL : ch == '\n' ? HTTP_E_BARE_LF :
					(CLS[ch] & HTTP_C_WS) ? HTTP_E_NAME_WS : HTTP_E_NAME;
				goto fail;
			}
			goto trailer_byte;
		case CK_TR_VALUE:
			if (c->tbytes >= HTTP_MAX_FIELDS_BYTES) {
				err = HTTP_E_TRAILER_TOO_LARGE;
				goto fail;
			}
			if (ch == '\r')
				c->state = CK_TR_LF;
			else if (!(CLS[ch] & HTTP_C_VALUE)) {
				err = ch == 0 ? HTTP_E_NUL : ch == '\n' ? HTTP_E_BARE_LF : HTTP_E_CTL;
				goto fail;
			}
			goto trailer_byte;
		case CK_TR_LF:
			if (c->tbytes >= HTTP_MAX_FIELDS_BYTES) {
				err = HTTP_E_TRAILER_TOO_LARGE;
				goto fail;
			}
			if (ch != '\n') {
				err = HTTP_E_BARE_CR;
				goto fail;
			}
			c->fields++;
			c->state = CK_TR_START;
			goto trailer_byte;
		trailer_byte:
			/* Every byte of a trailer field line counts, CRLF
			 * included, as in the head; each state above refuses
			 * the byte past the limit before looking at it. */
			c->tbytes++;
			i++;
			continue;
		case CK_END_LF:
			if (ch != '\n') {
				err = HTTP_E_BARE_CR;
				goto fail;
			}
			c->done = true;
			*len = o;
			*used = i + 1;
			return HTTP_DONE;
		default:
			err = HTTP_E_CHUNK_SIZE; /* a corrupt struct, not input */
			goto fail;
		}
	}
	*len = o;
	*used = n;
	return HTTP_NEED_MORE;

fail:
	c->err = (int8_t)err;
	*len = o;
	*used = i;
	return err;
}
