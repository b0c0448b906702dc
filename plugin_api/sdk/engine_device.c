/* SPDX-License-Identifier: MIT */
/* The engine SDK's devices: the facts a host states in
 * struct mcc_device_desc_v1.flags, found where the kernel describes it, and
 * the devices an engine opens through the SDK (named in the live view). */
#include "engine_internal.h" /* mcc_engine.h with default visibility */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t mcc_engine_device_flags(const char *sysfs_root, const char *name)
{
	char p[512];
	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	int n = snprintf(p, sizeof(p), "%s/class/infiniband/%s/device", sysfs_root ? sysfs_root : "/sys",
	                 name);
	if (n < 0 || (size_t)n >= sizeof(p))
		return 0;
	if (access(p, F_OK) == 0)
		return 0; /* a bus device behind it: an HCA */
	p[n - sizeof("/device") + 1] = '\0';
	return access(p, F_OK) == 0 ? MCC_DEVICE_F_SOFTWARE : 0;
}

/* ------------------------------------------------------------- registry */

int mcc_engine_device_open(mcc_engine *e, const struct mcc_device_desc_v1 *desc,
                           mcc_device **out)
{
	if (out)
		*out = NULL;
	if (!e || !desc || !out || !MCC_HAS_MEMBER(struct mcc_device_desc_v1, desc->struct_size, name))
		return -EINVAL;
	struct mcc_device_desc_v1 d;
	memset(&d, 0, sizeof(d));
	memcpy(&d, desc, desc->struct_size < sizeof(d) ? desc->struct_size : sizeof(d));
	struct mcc_engine_dev ent;
	memset(&ent, 0, sizeof(ent));
	ent.device_id = d.device_id;
	ent.flags = MCC_HAS_MEMBER(struct mcc_device_desc_v1, desc->struct_size, flags) ? d.flags : 0;
	ent.link_rate_bps = MCC_HAS_MEMBER(struct mcc_device_desc_v1, desc->struct_size, link_rate_bps)
	                            ? d.link_rate_bps
	                            : 0;
	if (d.name && *d.name)
		snprintf(ent.name, sizeof(ent.name), "%s", d.name);
	else
		snprintf(ent.name, sizeof(ent.name), "dev%u", d.device_id);

	pthread_mutex_lock(&e->dv_mu);
	if (e->ndevs == e->cap_devs) {
		uint32_t cap = e->cap_devs ? 2 * e->cap_devs : 8;
		struct mcc_engine_dev *v = realloc(e->devs, cap * sizeof(*v));
		if (!v) {
			pthread_mutex_unlock(&e->dv_mu);
			return -ENOMEM;
		}
		e->devs = v;
		e->cap_devs = cap;
	}
	/* the policy's open under dv_mu: a publish never sees a half-opened one */
	mcc_device *dev = NULL;
	int rc = e->ops->device_open(e->ctx, desc, &dev);
	if (rc == 0 && dev) {
		ent.dev = dev;
		e->devs[e->ndevs++] = ent;
	}
	pthread_mutex_unlock(&e->dv_mu);
	if (rc != 0 || !dev) {
		rc = rc ? rc : -EPROTO;
		MCC_ENG_LOG(e, MCC_LOG_ERROR, "device %s: the policy's device_open failed: %s (%d)",
		            ent.name, mcc_strerror(rc), rc);
		return rc;
	}
	*out = dev;
	return 0;
}

int mcc_engine_device_close(mcc_engine *e, mcc_device *dev)
{
	if (!e || !dev)
		return -EINVAL;
	pthread_mutex_lock(&e->dv_mu);
	uint32_t i = 0;
	while (i < e->ndevs && e->devs[i].dev != dev)
		i++;
	if (i == e->ndevs) {
		pthread_mutex_unlock(&e->dv_mu);
		MCC_ENG_LOG(e, MCC_LOG_WARN,
		            "device_close: device %p was not opened by mcc_engine_device_open of this "
		            "engine, or is closed; ignored",
		            (void *)dev);
		return -ENOENT;
	}
	/* keep the open order: the live view lists devices as opened */
	memmove(&e->devs[i], &e->devs[i + 1], (e->ndevs - i - 1) * sizeof(e->devs[0]));
	e->ndevs--;
	/* closed under dv_mu: a publish reading it has finished */
	e->ops->device_close(e->ctx, dev);
	pthread_mutex_unlock(&e->dv_mu);
	return 0;
}

void mcc__engine_devices_fini(mcc_engine *e)
{
	pthread_mutex_lock(&e->dv_mu);
	while (e->ndevs) {
		struct mcc_engine_dev *d = &e->devs[--e->ndevs];
		MCC_ENG_LOG(e, MCC_LOG_WARN, "engine close: device %s was still open; closed",
		            d->name);
		e->ops->device_close(e->ctx, d->dev);
	}
	free(e->devs);
	e->devs = NULL;
	e->cap_devs = 0;
	pthread_mutex_unlock(&e->dv_mu);
}
