/* vnet.h — virtio_net_hdr offload metadata (virtio 1.2, 5.1.6) checked
 * against the frame it describes; TCP super-frames cut into segments.
 *
 * A device that takes offloads from the kernel (tap: with IFF_VNET_HDR,
 * packet: with PACKET_VNET_HDR) gets a header in front of every frame:
 * "the checksum is left unfinished" (NEEDS_CSUM, with where it starts and
 * where it goes), "the checksum was verified" (DATA_VALID), or "this is a
 * super-frame of many TCP segments of gso_size payload bytes" (a peer's TSO,
 * or the kernel's GRO).  The stack's rx path takes whole MTU-sized frames
 * only, so the device checks the header here (vnet_parse) and cuts a
 * super-frame into the segments it stands for (vnet_seg), one at a time so
 * it can stop when its ring is full and go on later.
 *
 * The metadata is input like any other: vnet_parse believes nothing it
 * cannot check against the frame's own Ethernet, IP and TCP headers.  It
 * refuses (a negative wire_err; the device counts rx_vnet_bad):
 *   - flags other than NEEDS_CSUM and DATA_VALID;
 *   - NEEDS_CSUM whose checksum field is not inside the frame, or (GSO)
 *     not the TCP checksum of the TCP header the frame has;
 *   - gso_type other than NONE, TCPV4, TCPV6 (with or without the ECN bit),
 *     or one that does not match the IP version of the frame;
 *   - gso_size 0, a GSO frame with no TCP payload, more than VNET_MAX_SEGS
 *     segments, or a segment that would not fit the caller's buffer;
 *   - hdr_len larger than the frame;
 *   - an IPv4 or IPv6 header that is not TCP straight after it (IPv6
 *     extension headers are not cut), a fragment, or a length that is not
 *     the frame's;
 *   - a GSO frame with neither flag whose TCP checksum is wrong.
 * hdr_len is otherwise not compared with the real header length: Linux
 * fills it with the skb's linear length, which it calls "a hint"
 * (include/linux/virtio_net.h, virtio_net_hdr_from_skb); the headers are
 * read from the frame itself.
 *
 * Each segment gets: the Ethernet header (and VLAN tag) as it was; IPv4
 * total length, id + i and a new header checksum, or the IPv6 payload
 * length; TCP seq + i * gso_size; FIN and PSH only on the last segment, CWR
 * only on the first; a TCP checksum computed in full over the segment (so
 * a segment is a valid frame whatever the receiver trusts).
 *
 * Everything is little-endian on the wire of this header (virtio 1.0+;
 * AF_PACKET and TAP use the host's order, little-endian on every machine
 * skiff runs on).  Pure functions over caller bytes, no allocation.
 */
#ifndef WIRE_VNET_H
#define WIRE_VNET_H

#include "wire.h"

#define VNET_HLEN 12        /* virtio_net_hdr_v1 (num_buffers last): TAP, the ring */
#define VNET_HLEN_LEGACY 10 /* struct virtio_net_hdr: AF_PACKET's PACKET_VNET_HDR */

#define VNET_F_NEEDS_CSUM 1u
#define VNET_F_DATA_VALID 2u
#define VNET_GSO_NONE 0u
#define VNET_GSO_TCPV4 1u
#define VNET_GSO_UDP 3u
#define VNET_GSO_TCPV6 4u
#define VNET_GSO_ECN 0x80u

/* A super-frame of 64 KiB at Linux's smallest MSS (88) is 745 segments. */
#define VNET_MAX_SEGS 1024u

struct vnet_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
};

/* The first VNET_HLEN_LEGACY bytes at p (the fields above; num_buffers is
 * not read). */
void vnet_hdr_read(const uint8_t *p, struct vnet_hdr *h);
/* Write those 10 bytes. */
void vnet_hdr_write(uint8_t *p, const struct vnet_hdr *h);

/* What vnet_parse found: valid only after it returned WIRE_OK. */
struct vnet_frame {
	bool csum_ok;      /* the L4 checksum need not be verified (NEEDS_CSUM or
			    * DATA_VALID), or every segment's was computed here */
	bool gso;          /* a super-frame: cut it with vnet_seg */
	bool ipv6;         /* gso: the IP version */
	uint16_t l3_off;   /* gso: the IP header (14, or 18 after an 802.1Q tag) */
	uint16_t l4_off;   /* gso: the TCP header */
	uint16_t hlen;     /* gso: Ethernet + IP + TCP header bytes (the real ones) */
	uint16_t mss;      /* gso: TCP payload bytes per segment (gso_size) */
	uint32_t payload;  /* gso: TCP payload bytes of the super-frame */
	uint32_t nsegs;    /* segments vnet_seg makes: 1 when !gso */
};

/* Check h against the frame (len bytes, from the Ethernet header).
 * seg_cap: the largest segment (a whole frame) the caller can take.  A
 * frame that is not GSO needs no IP parse: it comes out with csum_ok per the
 * flags and nsegs 1, and the caller takes it as it is (len <= seg_cap is
 * the caller's check).  Returns WIRE_OK or a negative wire_err. */
int vnet_parse(const struct vnet_hdr *h, const uint8_t *frame, size_t len, size_t seg_cap,
	       struct vnet_frame *f);

/* Write segment i (0 .. f->nsegs-1) of the super-frame into out (cap
 * bytes), headers rewritten as the top of this file says.  Returns its
 * length, or 0 if i is out of range, f is not GSO or it does not fit. */
size_t vnet_seg(const struct vnet_frame *f, const uint8_t *frame, uint32_t i, uint8_t *out,
		size_t cap);

/* Finish a NEEDS_CSUM checksum in software, as the device would: the
 * one's-complement sum of the bytes from csum_start to the end (the field
 * holds the pseudo-header sum already) goes, complemented, into the field
 * at csum_start + csum_offset.  Returns WIRE_OK, or WIRE_EBADLEN if the
 * field is not inside the frame. */
int vnet_csum_finish(uint8_t *frame, size_t len, uint16_t csum_start, uint16_t csum_offset);

/* The segments a tx GSO frame of frame_len bytes (Ethernet header first)
 * stands for, for the counters: ceil((frame_len - hdr_len) / gso_size), 1
 * if it is not GSO or the fields make no sense (the kernel refuses those). */
uint32_t vnet_tx_segs(const struct vnet_hdr *h, size_t frame_len);

#endif
