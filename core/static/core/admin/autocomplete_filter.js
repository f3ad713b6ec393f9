// A changelist filter fed by the admin's autocomplete: choosing a row (or clearing the box) reloads
// the list with the filter's parameter set (or removed), from the first page.
'use strict';
window.addEventListener('load', function() {
    django.jQuery('select.autocomplete-filter').on('change', function() {
        const url = new URL(window.location.href);
        url.searchParams.delete(this.name);
        url.searchParams.delete('p');
        url.searchParams.delete('e');
        if (this.value) {
            url.searchParams.set(this.name, this.value);
        }
        window.location.assign(url.toString());
    });
});
