# mk/oci.mk — make oci: the OCI image of hosted skiff, and its test (docs/deploy.md).
#
#   make oci          tools/oci.sh: build/skiff, the unikernel images and exactly the libraries
#                     they link, as localhost/skiff:latest in podman and build/skiff-oci.tar
#                     (an OCI archive); no base image is pulled.  Root (podman's store).
#   make deploy-test  tests/deploy.sh: the image and deploy/kubernetes/ played on podman, on
#                     127.0.0.1 only (root; takes /tmp/skiff-nettest.lock)

.PHONY: oci deploy-test
oci: all
	OCI_REVISION=$(VERSION) tools/oci.sh $(BUILD)
deploy-test: all
	flock /tmp/skiff-nettest.lock tests/deploy.sh $(BUILD)
