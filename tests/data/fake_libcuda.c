/* A stand-in for the NVIDIA driver's libcuda.so.1, for tests only (tests/test_devices_driver.py).
 *
 * It implements the driver API entry points the device probe reads, with the real signatures and
 * error codes, and answers from environment variables read at cuInit (as the real driver reads
 * CUDA_VISIBLE_DEVICES there):
 *   FAKE_CUDA_DEVICES     number of GPUs the "driver" has (default 1; 0 = none)
 *   FAKE_CUDA_INIT_ERROR  a CUresult for cuInit to return (e.g. 803)
 *   FAKE_CUDA_HANG        cuInit sleeps that many seconds first (a hung driver)
 * CUDA_VISIBLE_DEVICES is applied like the real driver does: indices or GPU-UUID prefixes, in order,
 * up to the first entry that matches no device; nothing visible makes cuInit return
 * CUDA_ERROR_NO_DEVICE.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef int CUresult;
typedef int CUdevice;

#define MAX_DEVICES 8

static const char *NAMES[] = {"NVIDIA H200", "NVIDIA A100-SXM4-80GB"};
static const size_t MEMORY[] = {150108897280u, 85899345920u};
static const int CC_MAJOR[] = {9, 8}, CC_MINOR[] = {0, 0}, SMS[] = {132, 108}, CLOCK_KHZ[] = {1980000, 1410000};

static int initialized = 0;
static int total = 0;
static int visible[MAX_DEVICES];
static int visible_count = 0;

static void uuid_bytes(int device, unsigned char out[16]) {
    for (int i = 0; i < 16; i++) out[i] = (unsigned char)(0x11 * (i % 15) + device);
}

static void uuid_text(int device, char out[41]) {
    unsigned char b[16];
    uuid_bytes(device, b);
    snprintf(out, 41, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/* The device an entry of CUDA_VISIBLE_DEVICES names, or -1. */
static int match_entry(const char *entry) {
    size_t len = strlen(entry);
    if (len == 0) return -1;
    if (strncmp(entry, "GPU-", 4) == 0) {
        for (int d = 0; d < total; d++) {
            char uuid[41];
            uuid_text(d, uuid);
            if (strncasecmp(uuid, entry, len) == 0) return d;
        }
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)entry[i])) return -1;
    int index = atoi(entry);
    return index < total ? index : -1;
}

static void apply_visible_devices(void) {
    const char *value = getenv("CUDA_VISIBLE_DEVICES");
    visible_count = 0;
    if (value == NULL) {
        for (int d = 0; d < total; d++) visible[visible_count++] = d;
        return;
    }
    char buffer[512];
    snprintf(buffer, sizeof buffer, "%s", value);
    for (char *entry = strtok(buffer, ","); entry != NULL && visible_count < MAX_DEVICES; entry = strtok(NULL, ",")) {
        while (isspace((unsigned char)*entry)) entry++;
        char *end = entry + strlen(entry);
        while (end > entry && isspace((unsigned char)end[-1])) *--end = '\0';
        int device = match_entry(entry);
        if (device < 0) break; /* the driver ignores everything from the first unknown entry on */
        visible[visible_count++] = device;
    }
}

CUresult cuDriverGetVersion(int *version) {
    if (version == NULL) return 1;
    *version = 12040;
    return 0;
}

CUresult cuInit(unsigned int flags) {
    if (flags != 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
    const char *hang = getenv("FAKE_CUDA_HANG");
    if (hang != NULL) sleep((unsigned int)atoi(hang));
    const char *error = getenv("FAKE_CUDA_INIT_ERROR");
    if (error != NULL) return atoi(error);
    const char *count = getenv("FAKE_CUDA_DEVICES");
    total = count != NULL ? atoi(count) : 1;
    if (total > 2) total = 2;
    apply_visible_devices();
    if (visible_count == 0) return 100; /* CUDA_ERROR_NO_DEVICE */
    initialized = 1;
    return 0;
}

CUresult cuDeviceGetCount(int *count) {
    if (!initialized) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
    *count = visible_count;
    return 0;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
    if (!initialized) return 3;
    if (ordinal < 0 || ordinal >= visible_count) return 101; /* CUDA_ERROR_INVALID_DEVICE */
    *device = visible[ordinal];
    return 0;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice device) {
    if (!initialized) return 3;
    if (device < 0 || device >= total) return 101;
    snprintf(name, (size_t)len, "%s", NAMES[device]);
    return 0;
}

CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device) {
    if (!initialized) return 3;
    if (device < 0 || device >= total) return 101;
    *bytes = MEMORY[device];
    return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, CUdevice device) {
    if (!initialized) return 3;
    if (device < 0 || device >= total) return 101;
    switch (attribute) {
        case 75: *value = CC_MAJOR[device]; return 0;
        case 76: *value = CC_MINOR[device]; return 0;
        case 16: *value = SMS[device]; return 0;
        case 13: *value = CLOCK_KHZ[device]; return 0;
        case 33: *value = 0x18 + 0x12 * device; return 0; /* PCI bus */
        case 34: *value = 0; return 0;                    /* PCI device */
        case 50: *value = 0; return 0;                    /* PCI domain */
        default: return 1;
    }
}

CUresult cuDeviceGetUuid(unsigned char *uuid, CUdevice device) {
    if (!initialized) return 3;
    if (device < 0 || device >= total) return 101;
    uuid_bytes(device, uuid);
    return 0;
}

static const struct {
    int code;
    const char *name, *text;
} ERRORS[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static CUresult error_field(int code, const char **out, int want_name) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof ERRORS[0]; i++) {
        if (ERRORS[i].code == code) {
            *out = want_name ? ERRORS[i].name : ERRORS[i].text;
            return 0;
        }
    }
    *out = NULL;
    return 1; /* the real driver answers CUDA_ERROR_INVALID_VALUE for a code it does not know */
}

CUresult cuGetErrorName(CUresult error, const char **name) { return error_field(error, name, 1); }

CUresult cuGetErrorString(CUresult error, const char **text) { return error_field(error, text, 0); }
